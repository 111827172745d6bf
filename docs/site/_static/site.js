/* The sidebar buttons of sphinx-book-theme, working on a phone.

   The page has two buttons of each kind: pydata-sphinx-theme's in its top bar (hidden by
   sphinx-book-theme) and sphinx-book-theme's in the article's header (the ones a reader
   sees). Both themes' scripts wire up only the first `.primary-toggle` and
   `.secondary-toggle` of the page, the hidden ones, so the visible buttons open nothing
   (pydata-sphinx-theme #2451, sphinx-book-theme #988; pydata-sphinx-theme 0.20 to 0.24).
   A click on any other button of a kind is passed to the first one, which the themes
   handle: a drawer on a narrow screen, the sidebar shown or hidden on a wide one. The
   listener runs first (capture phase on the document) and stops the original click, so
   nothing happens twice where a later theme version wires up every button itself. */
document.addEventListener(
  "click",
  (event) => {
    const button = event.target.closest && event.target.closest(".primary-toggle, .secondary-toggle");
    if (!button) return;
    const kind = button.classList.contains("primary-toggle") ? ".primary-toggle" : ".secondary-toggle";
    const first = document.querySelector(kind);
    if (!first || first === button) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    first.click();
  },
  true,
);
