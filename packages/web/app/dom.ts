/** A small element builder: text goes in as text nodes, never as HTML. */
export type Child = Node | string | null | undefined | false;

export interface Props {
  readonly class?: string;
  readonly text?: string;
  readonly attrs?: Readonly<Record<string, string | undefined>>;
  readonly on?: Readonly<Record<string, (event: Event) => void>>;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.class) node.className = props.class;
  if (props.text !== undefined) node.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) if (value !== undefined) node.setAttribute(name, value);
  for (const [name, handler] of Object.entries(props.on ?? {})) node.addEventListener(name, handler);
  for (const child of children) if (child) node.append(child);
  return node;
}

export function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`The page has no #${id}.`);
  return node as T;
}

/** `20 MiB`, `1.5 MiB`, `300 KiB`, `12 bytes`. */
export function formatBytes(bytes: number): string {
  const mib = 1024 * 1024;
  if (bytes >= mib) return bytes % mib === 0 ? `${bytes / mib} MiB` : `${(bytes / mib).toFixed(1)} MiB`;
  if (bytes >= 1024) return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/** Display text never shows the marker provenance prefix (IMG-5). */
export function displayText(text: string): string {
  return text.replace(/\u2063/g, '');
}
