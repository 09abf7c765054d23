import { bucketSuite } from '../bucket-suite.js';
import { BACKENDS } from '../helpers.js';

for (const backend of BACKENDS) bucketSuite(backend);
