/** report/why: a step number as typed, refused when it is none; an unknown workspace or a step not recorded is a NotFound. */
import fs from 'node:fs'
import { NotFound } from '../../../proxy/report/lookup'
import { stepNumber, why } from '../../../proxy/report/why'
import { tempHome } from '../../support/harness'

describe('why', () => {
  it('reads 2 and 002 as step 2 and refuses anything else', () => {
    expect(stepNumber('2')).toBe(2)
    expect(stepNumber('002')).toBe(2)
    expect(() => stepNumber('latest')).toThrow(new NotFound('"latest" is not a step number (001, 002, …)'))
    expect(() => stepNumber('0')).toThrow(NotFound)
  })

  it('refuses a workspace that does not exist as a NotFound', async () => {
    const home = tempHome()
    try {
      await expect(why(home, 'nowhere', 'main', '1')).rejects.toBeInstanceOf(NotFound)
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})
