// Keep the reader's page and section when switching language: every language has the
// same pages and heading ids, so the selector's link plus the current #fragment is the
// target. Runs in the capture phase, before Material's own sitemap-based handler.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a.md-select__link[hreflang]");
  if (!link || event.defaultPrevented || event.button !== 0 || event.ctrlKey || event.metaKey) {
    return;
  }
  event.preventDefault();
  event.stopImmediatePropagation();
  const url = new URL(link.href, window.location.href);
  url.hash = window.location.hash;
  window.location.assign(url.toString());
}, true);
