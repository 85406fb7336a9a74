() => {
  // What a layout of the display page must hold, read in the page (tests/support/web/display_rig.py).
  const box = (node) => { const r = node.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const name = (node) => node.tagName.toLowerCase() + (node.id ? "#" + node.id : "")
    + (node.className && typeof node.className === "string" ? "." + node.className.split(" ").join(".") : "");
  const overflowing = [];
  for (const node of document.querySelectorAll("body *")) {
    const r = node.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    // Wider than the screen, or its content wider than itself (cut off, or scrolling sideways).
    if (r.left < -1 || r.right > innerWidth + 1) {
      overflowing.push(`${name(node)} ${r.left}..${r.right}`);
    }
    const block = getComputedStyle(node).display !== "inline";
    if (block && node.clientWidth > 0 && node.scrollWidth > node.clientWidth + 1) {
      overflowing.push(`${name(node)} content ${node.scrollWidth} > ${node.clientWidth}`);
    }
  }
  const pending = document.querySelector("#pending-scroll");
  const meters = [...document.querySelectorAll(".pool .meter")];
  return {
    width: innerWidth, height: innerHeight,
    page_width: document.documentElement.scrollWidth, page_height: document.documentElement.scrollHeight,
    overflowing: overflowing.slice(0, 20),
    meters: meters.map(box), meters_fit: meters.every((m) => m.scrollWidth <= m.clientWidth),
    pending: box(pending), pending_shown: pending.clientHeight, pending_content: pending.scrollHeight,
    tables: box(document.querySelector("#tables-section")),
  };
}
