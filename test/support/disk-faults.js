/**
 * A disk that fails on demand, for tests that cannot mount a full or read-only file system (that
 * takes root: bench/faults.ts does it for real). Loaded with `-r` in a process (and, through the
 * Worker constructor it wraps, in every worker thread that process starts), it reads the control
 * file named by HOLDFAST_DISK_FAULTS at each write: while that file holds
 * `{"under": "<dir>", "fault": "ENOSPC" | "EROFS" | "EIO"}`, writes to files under `<dir>` fail as
 * such a disk fails them. ENOSPC takes part of the first write it meets on each open file (a short
 * write, as a disk that fills mid-write does) and refuses the rest; EROFS refuses every change
 * (create, write, rename, remove, mkdir); EIO fails writes and flushes. Room a full disk gets back
 * (a file under `<dir>` removed or shortened) is taken by the writes after it, whole writes only,
 * as a real disk gives it — counted per thread (a worker thread does not see the room the server
 * thread freed), and forgotten when the control file changes. An absent or empty control file is
 * a healthy disk. Node's own `fs` is patched in place, so every module sees it.
 */
'use strict'
const fs = require('node:fs')
const path = require('node:path')
const workerThreads = require('node:worker_threads')

const control = process.env.HOLDFAST_DISK_FAULTS
const self = __filename

/** Bytes a full disk got back in this thread since the control file last changed. */
let room = 0
/** By inode: bytes a short write put there that the disk never had room for (freeing them gives none back). */
const conjured = new Map()
let lastText

/** The fault in force for `file`, or undefined. */
function faultFor(file) {
  if (!control || file === undefined || file === null) return undefined
  let text
  try {
    text = real.readFileSync(control, 'utf8')
  } catch {
    text = ''
  }
  if (text !== lastText) {
    lastText = text
    room = 0
    conjured.clear()
  }
  if (!text.trim()) return undefined
  const { under, fault } = JSON.parse(text)
  const abs = path.resolve(String(file))
  return abs === under || abs.startsWith(under + path.sep) ? fault : undefined
}

function errorOf(code, syscall, file) {
  const messages = {
    ENOSPC: 'no space left on device',
    EROFS: 'read-only file system',
    EIO: 'i/o error',
  }
  const err = new Error(`${code}: ${messages[code]}, ${syscall} '${file}'`)
  return Object.assign(err, { code, syscall, path: file, errno: -1 })
}

const real = {}
for (const name of [
  'openSync',
  'closeSync',
  'writeSync',
  'writevSync',
  'writeFileSync',
  'appendFileSync',
  'renameSync',
  'mkdirSync',
  'rmSync',
  'unlinkSync',
  'linkSync',
  'ftruncateSync',
  'truncateSync',
  'fsyncSync',
  'fdatasyncSync',
  'readFileSync',
])
  real[name] = fs[name]
const realPromises = {}
for (const name of ['open', 'writeFile', 'appendFile', 'rename', 'mkdir', 'rm', 'unlink', 'link'])
  realPromises[name] = fs.promises[name]

/** Open files by descriptor: their path, and whether a short write was given them already. */
const files = new Map()
const writes = (flags) => typeof flags === 'string' && /[wax+]/.test(flags)

fs.openSync = function (file, flags, ...rest) {
  // A full disk still opens and creates (an empty file costs no block); a read-only one does not.
  if (writes(flags) && faultFor(file) === 'EROFS') throw errorOf('EROFS', 'open', file)
  const fd = real.openSync(file, flags, ...rest)
  files.set(fd, { file: String(file), short: false })
  return fd
}
fs.closeSync = function (fd) {
  files.delete(fd)
  return real.closeSync(fd)
}

/** The bytes a write to `fd` of `length` bytes may take now (throws when none). */
function allowance(fd, length, syscall) {
  const f = files.get(fd)
  const fault = f && faultFor(f.file)
  if (!fault) return length
  if (fault === 'ENOSPC' && room >= length) {
    room -= length
    return length
  }
  if (fault === 'ENOSPC' && !f.short && length > 1) {
    f.short = true
    const ino = fs.fstatSync(fd).ino
    conjured.set(ino, (conjured.get(ino) ?? 0) + Math.floor(length / 2))
    return Math.floor(length / 2)
  }
  throw errorOf(fault, syscall, f.file)
}

fs.writeSync = function (fd, data, ...rest) {
  if (typeof data === 'string') {
    // writeSync(fd, string[, position[, encoding]])
    const bytes = Buffer.from(data, typeof rest[1] === 'string' ? rest[1] : 'utf8')
    const take = allowance(fd, bytes.length, 'write')
    return real.writeSync(fd, bytes, 0, take, typeof rest[0] === 'number' ? rest[0] : null)
  }
  // writeSync(fd, buffer[, offset[, length[, position]]])
  const offset = typeof rest[0] === 'number' ? rest[0] : 0
  const length = typeof rest[1] === 'number' ? rest[1] : data.byteLength - offset
  const take = allowance(fd, length, 'write')
  if (take === length) return real.writeSync(fd, data, ...rest)
  return real.writeSync(fd, data, offset, take, typeof rest[2] === 'number' ? rest[2] : null)
}
fs.writevSync = function (fd, buffers, position) {
  const all = Buffer.concat(buffers)
  const take = allowance(fd, all.length, 'write')
  if (take === all.length) return real.writevSync(fd, buffers, position)
  return real.writevSync(fd, [all.subarray(0, take)], position)
}
fs.writeFileSync = function (file, data, options) {
  if (typeof file === 'number') {
    const bytes =
      typeof data === 'string'
        ? Buffer.from(data)
        : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    let at = 0
    while (at < bytes.length) at += fs.writeSync(file, bytes, at, bytes.length - at)
    return undefined
  }
  const fault = faultFor(file)
  if (fault) throw errorOf(fault, 'open', file)
  return real.writeFileSync(file, data, options)
}
fs.appendFileSync = function (file, data, options) {
  const fault = typeof file === 'number' ? undefined : faultFor(file)
  if (fault) throw errorOf(fault, 'open', file)
  return real.appendFileSync(file, data, options)
}
/** Depth of the calls that counted their room already. */
let inner = 0

/** A full disk gets back what `file` held beyond `size` (a removal: size 0). */
function credit(file, size) {
  if (inner > 0 || faultFor(file) !== 'ENOSPC') return
  let st
  try {
    st = fs.statSync(file)
  } catch {
    return
  }
  if (!st.isFile() || st.size <= size) return
  const shrink = st.size - size
  const owed = conjured.get(st.ino) ?? 0
  conjured.set(st.ino, Math.max(0, owed - shrink))
  room += Math.max(0, shrink - owed)
}

for (const [name, syscall, which] of [
  ['renameSync', 'rename', 'EROFS'],
  ['mkdirSync', 'mkdir', 'ENOSPC EROFS'],
  ['rmSync', 'rm', 'EROFS'],
  ['unlinkSync', 'unlink', 'EROFS'],
  ['linkSync', 'link', 'ENOSPC EROFS'],
  ['truncateSync', 'truncate', 'EROFS'],
]) {
  fs[name] = function (file, ...rest) {
    const fault = faultFor(file)
    if (fault && which.split(' ').includes(fault) && !(name === 'mkdirSync' && exists(file)))
      throw errorOf(fault, syscall, file)
    if (name === 'truncateSync') credit(file, typeof rest[0] === 'number' ? rest[0] : 0)
    if (name === 'rmSync' || name === 'unlinkSync') credit(file, 0)
    // Node's own truncateSync and rmSync call ftruncateSync and unlinkSync: counted once, here.
    inner++
    try {
      return real[name](file, ...rest)
    } finally {
      inner--
    }
  }
}
function exists(file) {
  try {
    fs.statSync(file)
    return true
  } catch {
    return false
  }
}
fs.ftruncateSync = function (fd, len) {
  const f = files.get(fd)
  if (f && faultFor(f.file) === 'EROFS') throw errorOf('EROFS', 'ftruncate', f.file)
  if (f) credit(f.file, len ?? 0)
  return real.ftruncateSync(fd, len)
}
for (const [name, syscall] of [
  ['fsyncSync', 'fsync'],
  ['fdatasyncSync', 'fdatasync'],
]) {
  fs[name] = function (fd) {
    const f = files.get(fd)
    const fault = f && faultFor(f.file)
    if (fault === 'EIO' || fault === 'EROFS') throw errorOf(fault, syscall, f.file)
    return real[name](fd)
  }
}

fs.promises.open = async function (file, flags, ...rest) {
  if (writes(flags) && faultFor(file) === 'EROFS') throw errorOf('EROFS', 'open', file)
  const handle = await realPromises.open(file, flags, ...rest)
  if (!writes(flags)) return handle
  for (const m of ['write', 'writeFile', 'writev', 'appendFile']) {
    const orig = handle[m].bind(handle)
    handle[m] = async (...args) => {
      const fault = faultFor(file)
      if (fault) throw errorOf(fault, 'write', file)
      return orig(...args)
    }
  }
  return handle
}
for (const [name, syscall, which] of [
  ['writeFile', 'open', 'ENOSPC EROFS EIO'],
  ['appendFile', 'open', 'ENOSPC EROFS EIO'],
  ['rename', 'rename', 'EROFS'],
  ['mkdir', 'mkdir', 'ENOSPC EROFS'],
  ['rm', 'rm', 'EROFS'],
  ['unlink', 'unlink', 'EROFS'],
  ['link', 'link', 'ENOSPC EROFS'],
]) {
  fs.promises[name] = async function (file, ...rest) {
    const fault = typeof file === 'object' ? undefined : faultFor(file)
    if (fault && which.split(' ').includes(fault) && !(name === 'mkdir' && exists(file)))
      throw errorOf(fault, syscall, file)
    return realPromises[name](file, ...rest)
  }
}

// Every worker thread this process starts loads this file too.
const RealWorker = workerThreads.Worker
workerThreads.Worker = class extends RealWorker {
  constructor(file, options = {}) {
    const execArgv = [...(options.execArgv ?? process.execArgv)]
    if (!execArgv.includes(self)) execArgv.push('-r', self)
    super(file, { ...options, execArgv })
  }
}
