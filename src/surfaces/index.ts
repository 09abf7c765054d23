import type { Config } from '../config.js';
import type { Surface } from '../router/surface.js';
import type { PageDoor } from '../modules/page/door.js';
import { restPhpSurface } from './rest-php/surface.js';
import { restV1Surface } from './rest-v1/surface.js';
import { v1Surface } from './v1.js';
import { enterpriseSurface } from './enterprise/surface.js';

/** Every public surface of the service, in the order the app registers them: adding one is a line here. */
export function surfaces(page: PageDoor, config: Pick<Config, 'rest_v1'>): Surface[] {
  return [
    v1Surface(page),
    ...(config.rest_v1 ? [restV1Surface(page)] : []),
    restPhpSurface(page),
    enterpriseSurface(page),
  ];
}
