// Applies the saved theme before the page paints (loaded synchronously in <head>; a file, not an
// inline script, so the Content-Security-Policy needs no exception).
(function () {
  try {
    var t = localStorage.getItem("theme");
    if (t) document.documentElement.dataset.theme = t;
  } catch (e) {}
})();
