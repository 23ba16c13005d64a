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

// Quick checks: a details block of type "quiz" holds a task list of options ("[x]" marks
// the right one) and then the explanation. Without JavaScript the block opens to show
// them as written; here, just before a quiz first opens, each option becomes a radio
// button, "Check" gives feedback, and the explanation appears once an answer was checked.
// Strings come from the page, in its language (hooks/quick_check.py). Only on opening:
// building every quiz's form at load was a long task of its own on a phone (Lighthouse,
// 4x slowdown: 55-90 ms on the longer lessons), for blocks most readers never open.
(() => {
  const source = document.getElementById("course-quiz-strings");
  if (!source) {
    return;
  }
  let text = null;
  let made = 0;
  const convert = (quiz) => {
    text = text || JSON.parse(source.textContent);
    const list = quiz.querySelector("ul.task-list");
    if (!list || quiz.querySelector(":scope > form.course-quiz")) {
      return;
    }
    made += 1;
    const options = Array.from(list.querySelectorAll(":scope > li"));
    const explanation = Array.from(quiz.children).filter(
      (el) => el !== list && el.tagName !== "SUMMARY" && el.compareDocumentPosition(list) & Node.DOCUMENT_POSITION_PRECEDING);
    const form = document.createElement("form");
    form.className = "course-quiz";
    const group = document.createElement("fieldset");
    const legend = document.createElement("legend");
    legend.className = "course-visually-hidden";  // the summary already shows the question
    legend.textContent = quiz.querySelector("summary").textContent;
    group.append(legend);
    options.forEach((option, i) => {
      const box = option.querySelector("input[type=checkbox]");
      const label = document.createElement("label");
      const radio = document.createElement("input");
      radio.type = "radio";
      radio.name = `course-quiz-${made}`;
      radio.value = String(i);
      radio.dataset.right = box && box.checked ? "true" : "false";
      const answer = option.cloneNode(true);
      answer.querySelectorAll("input, label.task-list-control").forEach((el) => {
        if (el.tagName === "LABEL") el.replaceWith(...el.childNodes); else el.remove();
      });
      label.append(radio, " ", ...answer.childNodes);
      group.append(label);
    });
    const button = document.createElement("button");
    button.type = "submit";
    button.className = "md-button";
    button.textContent = text.check;
    const feedback = document.createElement("p");
    feedback.className = "course-quiz__feedback";
    feedback.setAttribute("role", "status");
    form.append(group, button, feedback);
    list.replaceWith(form);
    explanation.forEach((el) => { el.hidden = true; });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const chosen = form.querySelector("input[type=radio]:checked");
      form.querySelectorAll("label").forEach((l) => l.classList.remove("course-quiz__right", "course-quiz__wrong"));
      if (!chosen) {
        feedback.textContent = text.choose;
        feedback.dataset.result = "none";
        return;
      }
      const right = chosen.dataset.right === "true";
      feedback.textContent = right ? text.right : text.wrong;
      feedback.dataset.result = right ? "right" : "wrong";
      form.querySelectorAll("input[type=radio]").forEach((radio) => {
        if (radio.dataset.right === "true") radio.parentElement.classList.add("course-quiz__right");
      });
      if (!right) chosen.parentElement.classList.add("course-quiz__wrong");
      explanation.forEach((el) => { el.hidden = false; });
    });
  };
  // A click on the summary (a pointer, or Enter or Space on it) comes before the block
  // opens, so the reader never sees the plain list; "toggle" catches a block opened any
  // other way (Material opens the one around a link's target), and an open one is made now.
  document.addEventListener("click", (event) => {
    const summary = event.target.closest && event.target.closest("details.quiz > summary");
    if (summary) {
      convert(summary.parentElement);
    }
  }, true);
  document.addEventListener("toggle", (event) => {
    if (event.target.matches && event.target.matches("details.quiz") && event.target.open) {
      convert(event.target);
    }
  }, true);
  document.querySelectorAll("details.quiz[open]").forEach(convert);
})();
