/**
 * The real Claude Code CLI, 2.1.197 (the version package.json pins as @anthropic-ai/claude-code),
 * through `holdfast run` against the scripted model: the scenarios and rules of
 * test/support/claude-code-scenario.ts. A missing binary fails the suite (it never skips).
 */
import { describeScenarios } from '../support/claude-code-scenario'

describeScenarios('@anthropic-ai/claude-code')
