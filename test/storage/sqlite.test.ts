import { sqliteConfig } from '../helpers.js';
import { storageConformance } from './conformance.js';

storageConformance('sqlite', sqliteConfig);
