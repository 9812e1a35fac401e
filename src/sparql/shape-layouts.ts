// The layouts of the texts the planner has lexed, found by the text before their first constant: an application's next query is matched, not lexed.

import { LRUCache } from 'lru-cache';
import { holdsAt, layoutOf, matchLayout, sameLayout, type QueryShape, type ShapeLayout } from './lex-query-shape.js';

/** The layouts a planner has learned (docs/design.md#plan-cache). */
export interface ShapeLayouts {
  /** The shape of `text` read through a layout learned before, or undefined: then lex it and learn its layout. */
  match(text: string): QueryShape | undefined;
  /** Learns the layout of a text lexQueryShape just read into `shape`, when it has one. */
  learn(shape: QueryShape): void;
  /** Layouts held now. */
  readonly size: number;
}

/** At most this many layouts share one head (the text before their first constant), latest first. */
const LAYOUTS_PER_HEAD = 4;
/** At most this many layouts are tried for one text. */
const MAX_TRIES = 8;
const TOUCH_EVERY = 16;

/**
 * A node of the radix tree of heads: the text on the edge into it, its
 * children by their first character, and the layouts whose head ends here.
 */
interface Node {
  label: string;
  children: Map<number, Node> | undefined;
  layouts: ShapeLayout[] | undefined;
}

/**
 * Layouts held in a radix tree of their heads, so that finding the layouts a
 * text may have compares its characters once (most applications send every
 * query with one prologue: its heads share it), bounded by count and by the
 * characters they hold (least recently matched out first).
 */
export function createShapeLayouts(bounds: { maxLayouts: number; maxChars: number }): ShapeLayouts {
  const root: Node = { label: '', children: undefined, layouts: undefined };
  const held = new LRUCache<ShapeLayout, true>({
    max: bounds.maxLayouts,
    maxSize: bounds.maxChars,
    sizeCalculation: (_, layout) => layout.chars,
    dispose: (_, layout) => remove(layout),
  });
  /** The nodes on the path of the latest match that hold layouts, deepest last. */
  const path: Node[] = [];
  let uses = 0;

  const remove = (layout: ShapeLayout): void => {
    const head = layout.head;
    const trail: Node[] = [root];
    let node = root;
    let at = 0;
    while (at < head.length) {
      const child = node.children?.get(head.charCodeAt(at));
      if (child === undefined || !head.startsWith(child.label, at)) return;
      at += child.label.length;
      node = child;
      trail.push(node);
    }
    const index = node.layouts?.indexOf(layout) ?? -1;
    if (index < 0) return;
    node.layouts!.splice(index, 1);
    if (node.layouts!.length === 0) node.layouts = undefined;
    // Prune: a node without layouts goes when it has no children, and merges into its only child.
    for (let t = trail.length - 1; t > 0; t--) {
      const current = trail[t]!;
      const parent = trail[t - 1]!;
      if (current.layouts !== undefined) break;
      const first = current.label.charCodeAt(0);
      if (current.children === undefined || current.children.size === 0) parent.children!.delete(first);
      else if (current.children.size === 1) {
        const [only] = current.children.values();
        only!.label = current.label + only!.label;
        parent.children!.set(first, only!);
        break;
      } else break;
    }
  };

  /** Puts `layout` under its head: the node it is held in, or undefined when an equal one is held already. */
  const insert = (layout: ShapeLayout): Node | undefined => {
    const head = layout.head;
    let node = root;
    let at = 0;
    while (at < head.length) {
      const first = head.charCodeAt(at);
      const child = node.children?.get(first);
      if (child === undefined) {
        const leaf: Node = { label: head.slice(at), children: undefined, layouts: [layout] };
        (node.children ??= new Map()).set(first, leaf);
        return leaf;
      }
      const label = child.label;
      const max = Math.min(label.length, head.length - at);
      let k = 1;
      while (k < max && label.charCodeAt(k) === head.charCodeAt(at + k)) k++;
      if (k < label.length) {
        // The head leaves the edge inside its label: split the edge there.
        const middle: Node = { label: label.slice(0, k), children: new Map([[label.charCodeAt(k), child]]), layouts: undefined };
        child.label = label.slice(k);
        node.children!.set(first, middle);
        node = middle;
      } else node = child;
      at += k;
    }
    const layouts = (node.layouts ??= []);
    if (layouts.some((known) => sameLayout(known, layout))) return undefined;
    layouts.unshift(layout);
    return node;
  };

  return {
    match(text: string): QueryShape | undefined {
      if (held.size === 0) return undefined;
      path.length = 0;
      let node = root;
      let at = 0;
      for (;;) {
        if (node.layouts !== undefined) path.push(node);
        const child = node.children?.get(text.charCodeAt(at));
        if (child === undefined || !holdsAt(text, child.label, at)) break;
        at += child.label.length;
        node = child;
      }
      let tries = 0;
      for (let p = path.length - 1; p >= 0; p--) {
        for (const layout of path[p]!.layouts!) {
          const shape = matchLayout(text, layout, true);
          if (shape !== undefined) {
            // The LRU learns of every TOUCH_EVERY-th match, so a layout in use is not the first out.
            if (++uses % TOUCH_EVERY === 0) held.get(layout);
            return shape;
          }
          if (++tries === MAX_TRIES) return undefined;
        }
      }
      return undefined;
    },
    learn(shape: QueryShape): void {
      const layout = layoutOf(shape);
      if (layout === undefined || layout.chars > bounds.maxChars) return;
      const node = insert(layout);
      if (node === undefined) return;
      // Evictions prune other nodes only: this one holds a layout, and a merge keeps the child's object.
      held.set(layout, true);
      // One head holds a few layouts: the oldest leaves (dispose takes it out of the tree).
      while ((node.layouts?.length ?? 0) > LAYOUTS_PER_HEAD) held.delete(node.layouts!.at(-1)!);
    },
    get size() {
      return held.size;
    },
  };
}
