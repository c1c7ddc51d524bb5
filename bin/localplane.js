#!/usr/bin/env node
// The compiled CLI: `npm install` builds dist/ (the prepare script).
import '../dist/cli-launch.js';
