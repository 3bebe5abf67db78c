import { build } from 'esbuild'
const out = await build({ entryPoints: [process.argv[2]], bundle: false, minify: true, format: 'esm', write: false })
process.stdout.write(out.outputFiles[0].text)
