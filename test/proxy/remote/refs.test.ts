/**
 * proxy/remote/refs.ts, pure: the machine's name, where an agent goes on the remote (both forms),
 * the teammates' refspecs, `git push --porcelain` lines as data (lines captured from git 2.39),
 * the retry delays, URLs shown without their password, git's reason in one line.
 */
import {
  agentOfRemoteRef,
  agentOfSideRef,
  ownRefspecs,
  ownTrackingRef,
  sideRef,
  gitReason,
  machineName,
  parsePushPorcelain,
  parseTeammateRef,
  pushRefspec,
  remoteAgentRef,
  retryDelay,
  shownUrl,
  teammateRefspecs,
  urlHasPassword,
} from '../../../proxy/remote/refs'

describe('machineName', () => {
  it("takes holdfast.yaml's machine as it is when it is one ref component", () => {
    expect(machineName('laptop-a', 'ignored')).toBe('laptop-a')
  })
  it('refuses a configured name that is not one ref component', () => {
    for (const bad of ['a/b', 'a b', '.x', 'x.lock', 'a..b', ''])
      expect(() => machineName(bad)).toThrow(/machine: .* is not usable/)
  })
  it("defaults to the host name's first label, with what a ref cannot hold made -", () => {
    expect(machineName(undefined, 'ci-runner-7.internal.example')).toBe('ci-runner-7')
    expect(machineName(undefined, 'Ada’s MacBook Pro')).toBe('Ada-s-MacBook-Pro')
    expect(machineName(undefined, '---')).toBe('machine')
  })
})

describe('refs on the remote', () => {
  it('puts an agent under refs/holdfast/<machine>/agents/, or under refs/heads/holdfast/ for the heads form', () => {
    expect(remoteAgentRef('m', 'main', 'custom')).toBe('refs/holdfast/m/agents/main')
    expect(remoteAgentRef('m', 'main', 'heads')).toBe('refs/heads/holdfast/m/agents/main')
    expect(pushRefspec('a'.repeat(40), 'm', 'x.sub-1', 'custom')).toBe(
      `${'a'.repeat(40)}:refs/holdfast/m/agents/x.sub-1`,
    )
  })
  it('pushes without + (git then refuses what does not fast-forward)', () => {
    expect(pushRefspec('0'.repeat(40), 'm', 'a', 'heads').startsWith('+')).toBe(false)
  })
  it("reads the agent back from either form, and nothing from another machine's ref", () => {
    expect(agentOfRemoteRef('refs/holdfast/m/agents/main', 'm')).toBe('main')
    expect(agentOfRemoteRef('refs/heads/holdfast/m/agents/main', 'm')).toBe('main')
    expect(agentOfRemoteRef('refs/holdfast/other/agents/main', 'm')).toBeUndefined()
    expect(agentOfRemoteRef('refs/holdfast/m/agents/a/b', 'm')).toBeUndefined()
  })
  it("fetches this machine's own agents, both forms, into tracking refs of their own, never over agents/*", () => {
    expect(ownRefspecs('me')).toEqual([
      '+refs/holdfast/me/agents/*:refs/remotes/holdfast/own/custom/*',
      '+refs/heads/holdfast/me/agents/*:refs/remotes/holdfast/own/heads/*',
    ])
    expect(ownTrackingRef('heads', 'main')).toBe('refs/remotes/holdfast/own/heads/main')
  })
  it('puts a diverged agent beside its own ref, named after the last shared step, and reads the agent back', () => {
    expect(sideRef('m', 'main', '003', 'custom')).toBe('refs/holdfast/m/diverged/main/after-003')
    expect(sideRef('m', 'main', '003', 'heads')).toBe('refs/heads/holdfast/m/diverged/main/after-003')
    expect(agentOfSideRef('refs/holdfast/m/diverged/main/after-003', 'm')).toBe('main')
    expect(agentOfSideRef('refs/heads/holdfast/m/diverged/main/after-003', 'm')).toBe('main')
    expect(agentOfSideRef('refs/holdfast/m/agents/main', 'm')).toBeUndefined()
    expect(agentOfSideRef('refs/holdfast/o/diverged/main/after-003', 'm')).toBeUndefined()
    expect(agentOfRemoteRef('refs/holdfast/m/diverged/main/after-003', 'm')).toBeUndefined()
  })
  it("fetches every machine's agents but this one's, or one machine's, into refs/holdfast/", () => {
    expect(teammateRefspecs('me')).toEqual([
      '+refs/holdfast/*:refs/holdfast/*',
      '+refs/heads/holdfast/*:refs/holdfast/*',
      '^refs/holdfast/me/*',
      '^refs/heads/holdfast/me/*',
    ])
    expect(teammateRefspecs('me', 'b')).toEqual([
      '+refs/holdfast/b/agents/*:refs/holdfast/b/agents/*',
      '+refs/heads/holdfast/b/agents/*:refs/holdfast/b/agents/*',
    ])
    expect(parseTeammateRef('refs/holdfast/b/agents/main')).toEqual({ machine: 'b', agent: 'main' })
    expect(parseTeammateRef('refs/holdfast/b/other/main')).toBeUndefined()
  })
})

describe('parsePushPorcelain', () => {
  it('reads each ref line of git push --porcelain', () => {
    const oid = 'f'.repeat(40)
    const out = [
      'To git://127.0.0.1:1/team.git',
      `*\t${oid}:refs/holdfast/m/agents/a\t[new reference]`,
      ` \t${oid}:refs/holdfast/m/agents/b\t1111111..2222222`,
      `=\t${oid}:refs/holdfast/m/agents/c\t[up to date]`,
      `!\t${oid}:refs/holdfast/m/agents/d\t[rejected] (non-fast-forward)`,
      `!\t${oid}:refs/holdfast/m/agents/e\t[rejected] (fetch first)`,
      `!\t${oid}:refs/holdfast/m/agents/f\t[remote rejected] (hook declined)`,
      'Done',
    ].join('\n')
    expect(parsePushPorcelain(out).map((l) => [l.dst.slice(-1), l.outcome])).toEqual([
      ['a', 'pushed'],
      ['b', 'pushed'],
      ['c', 'up-to-date'],
      ['d', 'not-fast-forward'],
      ['e', 'not-fast-forward'],
      ['f', 'remote-rejected'],
    ])
  })
  it('reads nothing from a push that never reached the remote', () => {
    expect(parsePushPorcelain('')).toEqual([])
  })
})

describe('retryDelay', () => {
  it('doubles from the minimum up to the maximum', () => {
    expect([1, 2, 3, 4, 5, 6, 30].map((n) => retryDelay(n, 1000, 10_000))).toEqual([
      1000, 2000, 4000, 8000, 10_000, 10_000, 10_000,
    ])
  })
})

describe('URLs and reasons', () => {
  it('never shows a password a URL carries', () => {
    expect(shownUrl('https://ada:s3cret@git.example/team.git')).toBe('https://ada:***@git.example/team.git')
    expect(urlHasPassword('https://ada:s3cret@git.example/team.git')).toBe(true)
    for (const fine of ['https://ada@git.example/t.git', 'git@github.com:team/t.git', 'ssh://git@host/t.git'])
      expect([shownUrl(fine), urlHasPassword(fine)]).toEqual([fine, false])
  })
  it("gives git's fatal or error line without its prefix, skipping hints", () => {
    expect(gitReason("hint: try this\nfatal: unable to access 'x': Failed to connect\n")).toBe(
      "unable to access 'x': Failed to connect",
    )
    expect(gitReason('')).toBe('git failed')
  })
})
