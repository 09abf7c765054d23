import { parseArgs } from 'node:util';

const USAGE = 'usage: npm run bench -- [--quick] | --scale=N,... [--scale-on=sqlite|postgres|mariadb] | --scale-cassandra=N,... | --sweep=N,... | --farm=N,... | --enterprise';

export interface BenchFlags {
  quick: boolean;
  scale?: number[];
  scaleCassandra?: number[];
  scaleOn?: string;
  sweep?: number[];
  /** Wikis in the synthetic farm, one run each. */
  farm?: number[];
  /** Enterprise's APIs alone (against the wiki). */
  enterprise: boolean;
}

function refuse(message: string): never {
  console.error(`${message} (${USAGE})`);
  process.exit(2);
}

/** Store sizes, comma-separated: each a positive whole number. */
function sizes(flag: string, text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const list = text.split(',').map(Number);
  if (!list.every((n) => Number.isSafeInteger(n) && n > 0)) refuse(`--${flag} takes sizes such as 10000,100000; got '${text}'`);
  return list;
}

/**
 * The benchmark's flags, `--scale 10000` and `--scale=10000` alike. An unknown or malformed flag
 * ends the run with one line: a run that ignored it would be the whole bench, not the one asked for.
 */
export function benchFlags(args: string[]): BenchFlags {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        quick: { type: 'boolean' },
        scale: { type: 'string' },
        'scale-cassandra': { type: 'string' },
        'scale-on': { type: 'string' },
        sweep: { type: 'string' },
        farm: { type: 'string' },
        enterprise: { type: 'boolean' },
      },
    }));
  } catch (err) {
    refuse((err as Error).message);
  }
  const scaleOn = values['scale-on'] as string | undefined;
  if (scaleOn !== undefined && !['sqlite', 'postgres', 'mariadb'].includes(scaleOn)) refuse(`--scale-on takes sqlite, postgres or mariadb; got '${scaleOn}'`);
  return {
    quick: values.quick === true,
    scale: sizes('scale', values.scale as string | undefined),
    scaleCassandra: sizes('scale-cassandra', values['scale-cassandra'] as string | undefined),
    scaleOn,
    sweep: sizes('sweep', values.sweep as string | undefined),
    farm: sizes('farm', values.farm as string | undefined),
    enterprise: values.enterprise === true,
  };
}
