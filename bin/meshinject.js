#!/usr/bin/env node
// Entry point of the `meshinject` bin: the bundled CLI (built by `npm ci` via the `prepare` script).
import '../dist/meshinject.js';
