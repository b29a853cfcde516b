#!/usr/bin/env node
import '../dist/crystal.js';
