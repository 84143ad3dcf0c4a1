// Resumable uploads (TUS) on local disk: every scenario of resumable-scenarios.ts.
import { resumableScenarios } from './resumable-scenarios.js';

resumableScenarios('local', 'all');
