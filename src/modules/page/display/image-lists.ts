import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { isUnavailable } from '../../../upstream/wiki.js';
import type { WikiDirectory } from '../../../upstream/wikis.js';

/** Where a wiki lists the images that are shown only on the pages named beside them. */
export const BAD_IMAGE_LIST = 'MediaWiki:Bad_image_list';
/** Where a wiki lists, in the same format, the images media viewers must not open (`noviewer`). */
export const NOVIEWER_IMAGE_LIST = 'MediaWiki:Noviewer_image_list';
/** The list is read again after this long even if no change was seen (following may be off). */
const LIST_MAX_AGE_MS = 3600_000;

/** A file name as the list and Parsoid's `resource` name it, compared without its namespace. */
const fileKey = (title: string) => {
  const name = title.slice(title.indexOf(':') + 1).trim().replace(/ /g, '_');
  return name.charAt(0).toUpperCase() + name.slice(1);
};
const pageKey = (title: string) => {
  const t = title.trim().replace(/ /g, '_');
  return t.charAt(0).toUpperCase() + t.slice(1);
};

/** Files by name, each with the pages the list does not apply on. */
export interface ImageList {
  files: ReadonlyMap<string, ReadonlySet<string>>;
  /** Changes whenever the list does: part of what a display was made with. */
  version: string;
}

/** Whether a list names `file` for the page `title` (not one of the file's exception pages). */
export const listedFor = (list: ImageList, file: string | undefined, title: string) => {
  const except = file === undefined ? undefined : list.files.get(file);
  return except !== undefined && !except.has(title);
};

/**
 * MediaWiki's format: only lines starting with `*` count; on each, the first link is the file,
 * the later links the pages where it is allowed.
 */
export function parseImageList(wikitext: string): ImageList {
  const files = new Map<string, Set<string>>();
  for (const line of wikitext.split('\n')) {
    if (!line.startsWith('*')) continue;
    const links = [...line.matchAll(/\[\[:?([^|\]#]+)/g)].map((m) => m[1]!);
    if (links.length === 0 || !links[0]!.includes(':')) continue;
    files.set(fileKey(links[0]!), new Set(links.slice(1).map(pageKey)));
  }
  return { files, version: createHash('sha1').update(wikitext).digest('base64url').slice(0, 12) };
}

/** The file a Parsoid media element shows: the `resource` of its image (or broken-media span). */
export function fileOf(resource: string): string | undefined {
  if (!resource.startsWith('./')) return undefined;
  try {
    return fileKey(decodeURIComponent(resource.slice(2)));
  } catch {
    return undefined;
  }
}

/** A list of images each wiki keeps as a page (the bad image list, ...), read from it and kept; read again when it changes. */
export class ImageListPage {
  private readonly lists = new Map<string, { list: ImageList; read: number }>();
  private readonly reading = new Map<string, Promise<ImageList>>();

  constructor(
    readonly page: string,
    private readonly wikis: WikiDirectory,
    private readonly log: Logger,
  ) {}

  async of(domain: string): Promise<ImageList> {
    const known = this.lists.get(domain);
    if (known && Date.now() - known.read <= LIST_MAX_AGE_MS) return known.list;
    let pending = this.reading.get(domain);
    if (!pending) {
      pending = this.read(domain, known?.list).finally(() => this.reading.delete(domain));
      this.reading.set(domain, pending);
    }
    return pending;
  }

  /** The wiki changed the list: the next display reads it again. */
  forget(domain: string): void {
    this.lists.delete(domain);
  }

  private async read(domain: string, previous: ImageList | undefined): Promise<ImageList> {
    try {
      const list = parseImageList((await this.wikis.of(domain).api.pageText(this.page)) ?? '');
      this.lists.set(domain, { list, read: Date.now() });
      return list;
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      this.log.debug({ err, domain, page: this.page }, 'an image list could not be read: the wiki is unreachable');
      return previous ?? { files: new Map(), version: 'unknown' };
    }
  }
}
