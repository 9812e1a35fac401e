// Watches the policy and rule files and calls back, debounced, when any of them changes.

import { realpathSync, statSync, watch, type FSWatcher } from 'node:fs';
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
  /**
   * Called once when a folder of the files cannot be watched for `reportAfterMs` (it was removed
   * and not made again, for instance); the watch keeps trying every `retryMs` meanwhile.
   */
  readonly onError: (folder: string, reason: string) => void;
  /** Called when a folder `onError` named is watched again (its files are then read again too). */
  readonly onResumed?: (folder: string) => void;
  /** How often a folder that cannot be watched is tried again, milliseconds. */
  readonly retryMs?: number;
  /** How long a folder may stay unwatchable before `onError`, milliseconds. */
  readonly reportAfterMs?: number;
}

/** Editors save in bursts (write temp, fsync, rename, chmod): one reload per burst. */
const DEFAULT_DEBOUNCE_MS = 200;
/** A folder replaced by `mv old aside; mkdir new` is missing for a moment only: tried again often, reported after a second. */
const DEFAULT_RETRY_MS = 250;
const DEFAULT_REPORT_AFTER_MS = 1000;

/**
 * Watches the folders that hold `files`, not the files themselves: an editor that
 * saves by writing a temporary file and renaming it over the original replaces the
 * inode, and a watch on the old inode would never fire again. For the same reason a
 * watched folder that is itself replaced (renamed away, removed, made anew) is watched
 * again under its name; until it can be, it is tried again every `retryMs`. An event for
 * another name in those folders counts only when a watched file now resolves to another
 * real file: Kubernetes updates a mounted ConfigMap by renaming a new `..data` symlink over
 * the old one, so `policies.ttl -> ..data/policies.ttl` never changes itself while its
 * target does (docs/design/server.md, "Policies from a ConfigMap"). A file that is a symlink
 * into another folder has that folder watched too, so an edit of the target is seen.
 */
export function watchPolicies(options: WatchPoliciesOptions): PolicyWatch {
  const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  const reportAfterMs = options.reportAfterMs ?? DEFAULT_REPORT_AFTER_MS;
  const namesByFolder = new Map<string, Set<string>>();
  for (const file of options.files) {
    const folder = dirname(file);
    const names = namesByFolder.get(folder) ?? new Set<string>();
    names.add(basename(file));
    namesByFolder.set(folder, names);
  }

  let closed = false;
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

  // The folders that symlinks among the files resolve into, watched for their targets' names only:
  // `sed -i` on a target replaces it there, where the symlink's own folder sees nothing.
  const targetWatches = new Map<string, FSWatcher>();
  const followTargets = () => {
    const wanted = new Set<string>();
    for (const [file, target] of targets) {
      if (target !== '' && dirname(target) !== resolveTarget(dirname(file))) wanted.add(dirname(target));
    }
    for (const [folder, watcher] of targetWatches) {
      if (wanted.has(folder)) continue;
      watcher.close();
      targetWatches.delete(folder);
    }
    for (const folder of wanted) {
      if (closed || targetWatches.has(folder)) continue;
      try {
        const watcher = watch(folder, { persistent: false }, (_event, name) => {
          for (const [file, target] of targets) {
            if (dirname(target) === folder && (name === null || name === basename(target))) changed(file);
          }
        });
        // A target folder that goes away is no loss: the symlink now points elsewhere or nowhere,
        // which its own folder's watch sees.
        watcher.on('error', () => {
          watcher.close();
          targetWatches.delete(folder);
        });
        targetWatches.set(folder, watcher);
      } catch {
        // Gone already: the same.
      }
    }
  };

  const folderWatches = [...namesByFolder].map(([folder, names]) => {
    let watcher: FSWatcher | undefined;
    let identity = '';
    let retry: NodeJS.Timeout | undefined;
    let missingSince: number | undefined;
    let reported = false;

    const onEvent = (name: string | null) => {
      // Renamed away or removed (the watch follows the old folder, or dies with it): watch the name
      // again. An event named after the folder is its own (moved or deleted): a folder made anew may
      // reuse the inode of the one removed.
      if (identityOf(folder) !== identity || (name === basename(folder) && !names.has(name))) return rewatch();
      // Some platforms omit the name; then any change in the folder counts.
      if (name === null) changed(folder);
      else if (names.has(name)) {
        targets.set(join(folder, name), resolveTarget(join(folder, name)));
        changed(join(folder, name));
      } else {
        const file = retargeted(folder, names);
        if (file !== undefined) changed(file);
      }
      followTargets();
    };

    /** Watches the folder now there under the name; the reason it cannot, or undefined. */
    const open = (): string | undefined => {
      try {
        // Its identity before the watch: a folder replaced in between then differs at the first event.
        identity = identityOf(folder);
        if (identity === '') return 'ENOENT';
        const opened = watch(folder, { persistent: false }, (_event, name) => onEvent(name));
        opened.on('error', rewatch);
        watcher = opened;
        return undefined;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      }
    };

    const rewatch = (): void => {
      watcher?.close();
      watcher = undefined;
      clearTimeout(retry);
      if (closed) return;
      const failure = open();
      if (failure === undefined) {
        if (reported) options.onResumed?.(folder);
        reported = false;
        missingSince = undefined;
        // The files may have changed while the folder was away: read them again.
        retargeted(folder, names);
        followTargets();
        changed(join(folder, [...names][0] ?? ''));
        return;
      }
      missingSince ??= Date.now();
      if (!reported && Date.now() - missingSince >= reportAfterMs) {
        reported = true;
        options.onError(folder, failure === 'ENOENT' ? 'the folder is gone (ENOENT)' : failure);
      }
      retry = setTimeout(rewatch, retryMs);
      retry.unref();
    };

    if (open() !== undefined) {
      missingSince = Date.now();
      retry = setTimeout(rewatch, retryMs);
      retry.unref();
    }
    return {
      close() {
        clearTimeout(retry);
        watcher?.close();
      },
    };
  });
  followTargets();

  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const folderWatch of folderWatches) folderWatch.close();
      for (const watcher of targetWatches.values()) watcher.close();
      targetWatches.clear();
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

/** What tells one folder from another made later under the same name (device, inode, birth), or '' when there is none now. */
function identityOf(folder: string): string {
  try {
    const stats = statSync(folder);
    return `${stats.dev}:${stats.ino}:${stats.birthtimeMs}`;
  } catch {
    return '';
  }
}
