import { cassandraConfig } from '../helpers.js';
import { storageConformance } from './conformance.js';

storageConformance('cassandra', cassandraConfig);
