#!/usr/bin/env node
import { runCommandLine } from './command-line.js'

await runCommandLine(process.argv.slice(2))
