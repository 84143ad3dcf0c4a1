// In charge of the registry of payment events we act on: one handler per event type. Types not
// listed here are acknowledged (200), recorded in the event log, and otherwise ignored.
import type { HandlerRegistry } from './events.js';

export const billingHandlers: HandlerRegistry = {};
