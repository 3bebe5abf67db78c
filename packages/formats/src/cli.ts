#!/usr/bin/env node
// colloquy-formats: convert and inspect agent transcripts from the command line.
import { runCli } from './cli-run.js'

process.exit(await runCli(process.argv.slice(2)))
