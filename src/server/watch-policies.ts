// Watches the policy and rule files and calls back, debounced, when any of them changes.

import { realpathSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** A running watch; `close` stops it. */
export interface PolicyWatch {
  close(): void;
}

export interface WatchPoliciesOptions {
  /** Absolute paths of the files to watch. */
  readonly files: readonly string[];
  /** Quiet time after the last event before `onChange` runs, milliseconds. */
  readonly debounceMs?: number;
  /** Called once per burst of changes, with the name of the last file that changed. */
  readonly onChange: (file: string) => void;
  /** Called when a folder can no longer be watched (it was removed, for instance). */
  readonly onError: (folder: string, reason: string) => void;
}

/** Editors save in bursts (write temp, fsync, rename, chmod): one reload per burst. */
const DEFAULT_DEBOUNCE_MS = 200;

/**
 * Watches the folders that hold `files`, not the files themselves: an editor that
 * saves by writing a temporary file and renaming it over the original replaces the
 * inode, and a watch on the old inode would never fire again. An event for another
 * name in those folders counts only when a watched file now resolves to another real
 * file: Kubernetes updates a mounted ConfigMap by renaming a new `..data` symlink over
 * the old one, so `policies.ttl -> ..data/policies.ttl` never changes itself while its
 * target does (docs/design/server.md, "Policies from a ConfigMap").
 */
export function watchPolicies(options: WatchPoliciesOptions): PolicyWatch {
  const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const namesByFolder = new Map<string, Set<string>>();
  for (const file of options.files) {
    const folder = dirname(file);
    const names = namesByFolder.get(folder) ?? new Set<string>();
    names.add(basename(file));
    namesByFolder.set(folder, names);
  }

  let timer: NodeJS.Timeout | undefined;
  let lastFile = '';
  const changed = (file: string) => {
    lastFile = file;
    clearTimeout(timer);
    timer = setTimeout(() => options.onChange(lastFile), debounceMs);
    timer.unref();
  };

  // Where each watched file resolves now; a file that does not exist resolves to ''.
  const targets = new Map<string, string>();
  for (const file of options.files) targets.set(file, resolveTarget(file));
  const retargeted = (folder: string, names: ReadonlySet<string>): string | undefined => {
    let found: string | undefined;
    for (const name of names) {
      const file = join(folder, name);
      const target = resolveTarget(file);
      if (target !== targets.get(file)) found = file;
      targets.set(file, target);
    }
    return found;
  };

  const watchers: FSWatcher[] = [];
  for (const [folder, names] of namesByFolder) {
    const watcher = watch(folder, { persistent: false }, (_event, name) => {
      // Some platforms omit the name; then any change in the folder counts.
      if (name === null) return changed(folder);
      if (names.has(name)) {
        targets.set(join(folder, name), resolveTarget(join(folder, name)));
        return changed(join(folder, name));
      }
      const file = retargeted(folder, names);
      if (file !== undefined) changed(file);
    });
    watcher.on('error', (error) => {
      options.onError(folder, (error as NodeJS.ErrnoException).code ?? error.message);
      watcher.close();
    });
    watchers.push(watcher);
  }

  return {
    close() {
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}

/** The real path `file` resolves to through every symlink, or '' when it does not exist now. */
function resolveTarget(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return '';
  }
}
