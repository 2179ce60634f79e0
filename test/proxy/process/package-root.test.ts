/**
 * proxy/process/package-root.ts: holdfast's own files are found by walking up from the module to the
 * nearest package.json, so sources (`proxy/`) and the build (`dist/proxy/`) find the same root at
 * different depths; the register hook and the version come from there; with no package.json
 * above, loading the module fails with a sentence naming where it looked.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PACKAGE_ROOT, packageVersion, SOURCE_REGISTER } from '../../../proxy/process/package-root'
import { ROOT } from '../../support/harness'

const BUILT = path.join(ROOT, 'dist', 'proxy', 'process', 'package-root.js')

let tmp: string
beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-root-')))
})
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }))

/** The built module copied to `rel` under the temp dir and loaded from there (its own __dirname). */
function loadCopyAt(rel: string): typeof import('../../../proxy/process/package-root') {
  const file = path.join(tmp, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.copyFileSync(BUILT, file)
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(file) as typeof import('../../../proxy/process/package-root')
}

describe('the package root', () => {
  it("is the repository's root from the sources, holding holdfast's package.json and the register hook", () => {
    expect(PACKAGE_ROOT).toBe(path.resolve(ROOT))
    const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
      name: string
      version: string
    }
    expect(pkg.name).toBe('holdfast')
    expect(packageVersion()).toBe(pkg.version)
    expect(SOURCE_REGISTER).toBe(path.join(PACKAGE_ROOT, 'scripts', 'register.js'))
    expect(fs.existsSync(SOURCE_REGISTER)).toBe(true)
  })

  it('is the same root from the build, one directory deeper', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const built = require(BUILT) as typeof import('../../../proxy/process/package-root')
    expect(built.PACKAGE_ROOT).toBe(PACKAGE_ROOT)
  })

  it('is the nearest directory above the module that has a package.json, and the version is read from it', () => {
    fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'holdfast', version: '9.8.7' }))
    fs.mkdirSync(path.join(tmp, 'dist', 'proxy', 'process'), { recursive: true })
    const m = loadCopyAt('dist/proxy/process/package-root.js')
    expect(m.PACKAGE_ROOT).toBe(tmp)
    expect(m.packageVersion()).toBe('9.8.7')
    expect(m.SOURCE_REGISTER).toBe(path.join(tmp, 'scripts', 'register.js'))
  })

  it('fails to load, naming where it looked, when no package.json is above it', () => {
    if (fs.existsSync(path.join(path.parse(tmp).root, 'package.json'))) return // nothing to prove here
    const parents: string[] = []
    for (let d = tmp; path.dirname(d) !== d; d = path.dirname(d)) parents.push(d)
    if (parents.some((d) => fs.existsSync(path.join(d, 'package.json')))) return
    expect(() => loadCopyAt('deep/proxy/process/package-root.js')).toThrow(
      `holdfast's package.json was not found above ${path.join(tmp, 'deep', 'proxy', 'process')}`,
    )
  })
})
