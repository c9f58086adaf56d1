// A real small filesystem for disk-full scenarios: a tmpfs of a few MiB mounted on a fresh folder.
// Needs root (or CAP_SYS_ADMIN), as CI has; where mounting is impossible the test fails saying so,
// rather than skipping, because the behaviour it checks is only real on a real full disk.
import { mkdtempSync, rmSync, statfsSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type SmallDisk = {
  path: string;
  /** Fills every free byte (again) with a filler file; the next allocation fails with ENOSPC. */
  fill(): void;
  /** Removes the filler: the space returns. */
  free(): void;
  freeBytes(): number;
} & Disposable;

export function mountSmallDisk(sizeMiB = 16): SmallDisk {
  const path = mkdtempSync(join(tmpdir(), "vecsync-disk-"));
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${sizeMiB}m,mode=0700`, "tmpfs", path], { stderr: "pipe" });
  if (mounted.exitCode !== 0) {
    rmSync(path, { recursive: true, force: true });
    throw new Error(`cannot mount a ${sizeMiB} MiB tmpfs (this test needs root or CAP_SYS_ADMIN): ${mounted.stderr.toString().trim()}`);
  }
  const filler = join(path, "filler");
  const freeBytes = () => {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  };
  return {
    path,
    freeBytes,
    fill() {
      // One big write, then page-sized ones until ENOSPC: tmpfs counts whole pages.
      const chunk = Buffer.alloc(64 * 1024);
      writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes() - chunk.length)), { flag: "a" });
      for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
        try {
          for (;;) writeFileSync(filler, chunk.subarray(0, size), { flag: "a" });
        } catch (err) {
          if ((err as { code?: string }).code !== "ENOSPC") throw err;
        }
      }
    },
    free() {
      unlinkSync(filler);
    },
    [Symbol.dispose]() {
      // Lazy unmount: a process killed a moment ago may still hold a file open.
      Bun.spawnSync(["umount", "-l", path]);
      rmSync(path, { recursive: true, force: true });
    },
  };
}
