import { PROPS } from './renders.js';

const encodeTitle = (title: string) => encodeURIComponent(title).replace(/%3A/g, ':');

/** Every URL whose answer changes with a page's latest revision: what HTTP caches must forget. */
export function latestUrls(domain: string, title: string): string[] {
  const t = encodeTitle(title);
  const page = `/${domain}/v1/page/${t}`;
  return [
    `/${domain}/v1/page/`,
    `${page}/`,
    `${page}/rev/`,
    ...PROPS.flatMap((prop) => [`${page}/${prop}`, `${page}/${prop}/`]),
    `${page}/html?data-mw=inline`,
    `/${domain}/rest_v1/page/html/${t}`,
    `/${domain}/rest_v1/page/title/${t}`,
    `/${domain}/rest_v1/page/summary/${t}`,
  ];
}

/** The URLs of one revision and its render: what caches must forget when it stops being servable. */
export function revisionUrls(domain: string, title: string, rev: number, tid: string | null): string[] {
  const t = encodeTitle(title);
  const page = `/${domain}/v1/page/${t}`;
  const ids = tid ? [String(rev), tid] : [String(rev)];
  return [
    `${page}/rev/${rev}`,
    `/${domain}/v1/revision/${rev}`,
    ...PROPS.flatMap((prop) => ids.map((id) => `${page}/${prop}/${id}`)),
    `/${domain}/rest_v1/page/html/${t}/${rev}`,
    ...(tid ? [`/${domain}/rest_v1/page/html/${t}/${rev}/${tid}`] : []),
  ];
}
