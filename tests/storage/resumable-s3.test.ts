// Resumable uploads (TUS) on an S3-compatible backend (s3rver): the scenarios whose parts and
// objects live in the backend (multi-chunk uploads, resuming, nothing visible early,
// termination, expiry).
import { resumableScenarios } from './resumable-scenarios.js';

resumableScenarios('s3', 'backend');
