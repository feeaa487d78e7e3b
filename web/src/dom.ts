// A few lines of DOM building instead of a UI library: every page is redrawn from the server's
// view, so an element factory and `replaceChildren` are all the app needs.

export type Child = Node | string | number | null | undefined | false | Child[];

export interface Attrs {
  class?: string;
  id?: string;
  title?: string;
  role?: string;
  href?: string;
  type?: string;
  name?: string;
  value?: string;
  placeholder?: string;
  for?: string;
  scope?: string;
  min?: string;
  tabindex?: string;
  max?: string;
  disabled?: boolean;
  selected?: boolean;
  checked?: boolean;
  hidden?: boolean;
  open?: boolean;
  /** `aria-*` attributes, without the prefix. */
  aria?: Record<string, string>;
  /** `data-*` attributes, without the prefix. */
  data?: Record<string, string | number>;
  style?: string;
  onclick?: (event: MouseEvent) => void;
  onchange?: (event: Event) => void;
  oninput?: (event: Event) => void;
  onsubmit?: (event: SubmitEvent) => void;
}

/** An element with attributes and children (nested arrays flattened; null, false skipped). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (key === "aria" || key === "data") {
      const prefix = key === "aria" ? "aria-" : "data-";
      for (const [name, v] of Object.entries(value as Record<string, string | number>)) {
        element.setAttribute(prefix + name, String(v));
      }
    } else if (key.startsWith("on")) {
      element.addEventListener(key.slice(2), value as EventListener);
    } else if (value === true) {
      element.setAttribute(key, "");
    } else {
      element.setAttribute(key, String(value));
    }
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** Replace what `root` shows. */
export function draw(root: Element, ...children: Child[]): void {
  root.replaceChildren();
  append(root, children);
}

/** Replace what `root` shows with what `build` makes, where `build` reuses elements of the
 * last draw (the lobby's name field, its new-game form). Building moves such an element out of
 * the page, which drops its focus and caret, and a person typing in it would type into
 * nothing: both are noted before and given back after. */
export function redraw(root: Element, build: () => Child[]): void {
  const active = document.activeElement;
  const focused = active instanceof HTMLElement && root.contains(active) ? active : null;
  const caret = focused instanceof HTMLInputElement || focused instanceof HTMLTextAreaElement ? [focused.selectionStart, focused.selectionEnd] : null;
  draw(root, build());
  if (!focused || document.activeElement === focused || !root.contains(focused)) return;
  focused.focus({ preventScroll: true });
  if (caret && caret[0] !== null && caret[1] !== null) {
    (focused as HTMLInputElement | HTMLTextAreaElement).setSelectionRange(caret[0], caret[1]);
  }
}

/** An SVG element (the tiles' pips). */
export function svg(tag: string, attrs: Record<string, string | number>, ...children: Node[]): SVGElement {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) element.setAttribute(key, String(value));
  for (const child of children) element.appendChild(child);
  return element;
}

let liveRegion: HTMLElement | undefined;

/** Say `text` to a screen reader: one polite live region, outside the pages (which are redrawn
 * whole, and a region drawn anew is not reliably heard). */
export function announce(text: string): void {
  if (!liveRegion) {
    liveRegion = h("div", { id: "announce", class: "sr-only", role: "status", aria: { live: "polite" } });
    document.body.appendChild(liveRegion);
  }
  liveRegion.textContent = text;
}
