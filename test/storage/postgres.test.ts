import { postgresConfig } from '../helpers.js';
import { storageConformance } from './conformance.js';

storageConformance('postgres', postgresConfig);
