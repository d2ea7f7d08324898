// Runs memory-tool commands, one JSON object per line on stdin, through the
// TypeScript SDK's BetaLocalFilesystemMemoryTool as its tool runner does
// (runRunnableTool: a thrown error becomes "Error: <message>", is_error),
// over the directory named by the first argument, and prints one
// {"content":…,"is_error":…} per line.
import * as readline from 'node:readline';
import { BetaLocalFilesystemMemoryTool, betaMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { runRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';

const memory = await BetaLocalFilesystemMemoryTool.init(process.argv[2]);
const tool = betaMemoryTool(memory);
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === '') continue;
  const input = JSON.parse(line);
  // The SDK writes the text "undefined" for an omitted new_str; the
  // tool's documentation says omitting it deletes old_str.
  if (input.command === 'str_replace' && input.new_str === undefined) input.new_str = '';
  const out = await runRunnableTool(tool, input, {});
  process.stdout.write(JSON.stringify({ content: out.content, is_error: out.isError }) + '\n');
}
