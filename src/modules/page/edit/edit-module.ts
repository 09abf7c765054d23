import type { Module } from '../../../router/types.js';
import type { NormalizeTitle } from '../model/title-url.js';
import type { PageSaver } from './page-saver.js';
import { saveRoutes } from './save-routes.js';
import { transformRoutes } from './transform-routes.js';
import type { Transforms } from './transforms.js';

/**
 * The edit side under `/{domain}/v1/`: saves (`POST /page/{title}`) and Parsoid's transforms
 * (`/transform/...`), with the stash of transformed HTML a transform back reads its original from.
 * The steps of a save's transaction are served by `save-records.ts`.
 */
export function pageEditModule({ saver, transforms, normalize }: { saver: PageSaver; transforms: Transforms; normalize: NormalizeTitle }): Module {
  return {
    name: 'page-edit',
    api: 'v1',
    tables: ['transform_stash'],
    setupWiki: (ctx, domain) => transforms.createTables(ctx, domain),
    routes: [...saveRoutes(saver, normalize), ...transformRoutes(transforms, normalize)],
  };
}
