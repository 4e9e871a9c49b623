// Building the page: elements with their properties and children. Everything an agent wrote goes in as text
// (textContent or a text child), never parsed as HTML.

/** A DOM element with properties and children (null, undefined and false children are left out). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k.startsWith('aria-') || k.startsWith('data-') || k === 'role' || k === 'datetime') node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

/** A definition list of the pairs whose value is known. */
export function facts(pairs) {
  const dl = el('dl', { className: 'facts' });
  for (const [k, v] of pairs)
    if (v !== null && v !== undefined && v !== '')
      dl.append(el('dt', { textContent: k }), el('dd', { textContent: String(v) }));
  return dl;
}
