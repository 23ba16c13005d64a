/* po-i18n preview only (mkdocs serve, po-i18n serve); never in a built site.
   The reader keeps their place when the live reload reloads the page after a save.
   MkDocs's live reload calls location.reload(). The browser's own restoring puts back
   the same pixel offset, which is another place once the page's content-visibility
   blocks (laid out only near the viewport, an estimated height until then) lie above
   it. So this keeps, per path in sessionStorage, the block at the top of the viewport
   (its index among the article's blocks) and how far down the viewport it was, and on a
   reload brings that block back there (scrollY only where the block is gone). */
(function () {
  "use strict";
  var key = "po-i18n-preview-place:" + location.pathname;
  var BLOCKS = "h1,h2,h3,h4,h5,h6,p,li,pre,table,tr,dt,dd,summary,blockquote";

  function blocks() {
    return (document.querySelector("article") || document.body).querySelectorAll(BLOCKS);
  }

  function save() {
    var list = blocks(), lo = 0, hi = list.length;
    while (lo < hi) { // the first block not wholly above the viewport (blocks are in page order)
      var mid = (lo + hi) >> 1;
      if (list[mid].getBoundingClientRect().bottom <= 0) { lo = mid + 1; } else { hi = mid; }
    }
    var place = {y: window.scrollY, block: lo < list.length ? lo : -1,
                 top: lo < list.length ? list[lo].getBoundingClientRect().top : 0};
    try { sessionStorage.setItem(key, JSON.stringify(place)); } catch (e) { /* storage off: nothing kept */ }
  }

  function restore(place) {
    var block = place.block >= 0 ? blocks()[place.block] : null;
    if (block) {
      window.scrollBy(0, block.getBoundingClientRect().top - place.top);
    } else {
      window.scrollTo(0, place.y);
    }
  }

  if ("scrollRestoration" in history) {
    history.scrollRestoration = "manual"; // this script restores; the browser's pixel offset would fight it
  }
  window.addEventListener("pagehide", save);
  var navigation = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  var saved = null;
  try { saved = JSON.parse(sessionStorage.getItem(key) || "null"); } catch (e) { saved = null; }
  if (!saved || !navigation || navigation.type !== "reload") {
    return; // a page opened anew starts at its top (or its #fragment), as it does without the preview
  }
  restore(saved);
  // once more when everything has loaded: the scripts run after the first paint may change heights
  window.addEventListener("load", function () { restore(saved); });
})();
