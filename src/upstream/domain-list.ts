import fs from 'node:fs';
import type { Logger } from 'pino';

/** How often the file is looked at for a change. */
const RECHECK_MS = 5000;

/**
 * A farm's list of its wikis, one domain a line (`#` starts a comment), as its operator keeps it
 * (or as a job writes it from the farm's own list, SiteMatrix's `action=sitematrix`): read at
 * start, and again whenever the file changes. A list that cannot be read again keeps the one
 * read last.
 */
export class DomainList {
  private domains: Set<string>;

  constructor(private readonly path: string, private readonly log?: Logger) {
    this.domains = DomainList.read(path);
    fs.watchFile(path, { interval: RECHECK_MS, persistent: false }, () => this.reload());
  }

  static read(path: string): Set<string> {
    const text = fs.readFileSync(path, 'utf8');
    return new Set(text.split('\n').map((line) => line.replace(/#.*/, '').trim().toLowerCase()).filter(Boolean));
  }

  has(domain: string): boolean {
    return this.domains.has(domain);
  }

  get size(): number {
    return this.domains.size;
  }

  reload(): void {
    try {
      this.domains = DomainList.read(this.path);
      this.log?.info({ path: this.path, domains: this.domains.size }, "read the farm's list of wikis again");
    } catch (err) {
      this.log?.warn({ err, path: this.path }, "the farm's list of wikis could not be read again; the one read last is kept");
    }
  }

  close(): void {
    fs.unwatchFile(this.path);
  }
}
