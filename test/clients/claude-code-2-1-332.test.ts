/**
 * The real Claude Code CLI, 2.1.332 (pinned as the npm alias claude-code-2-1-332), which defers
 * MCP tools behind ToolSearch, through `holdfast run` against the scripted model: the scenarios
 * and rules of test/support/claude-code-scenario.ts. A missing binary fails the suite.
 */
import { describeScenarios } from '../support/claude-code-scenario'

describeScenarios('claude-code-2-1-332')
