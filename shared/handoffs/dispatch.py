"""Running the tool calls of one model turn. Taught in lesson 03."""

import concurrent.futures

from .messages import tool_result_block


def dispatch_parallel(tool_use_blocks, tools):
    """Run every tool_use block in parallel; an unknown name raises KeyError, as in the lesson."""
    if not tool_use_blocks:
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(tool_use_blocks)) as pool:
        futures = [pool.submit(tools[b["name"]], **b["input"]) for b in tool_use_blocks]
        results = [future.result() for future in futures]
    return [tool_result_block(b["id"], r) for b, r in zip(tool_use_blocks, results)]


def call_safely(tools, block):
    """Run one tool_use block; an unknown or failing tool becomes an is_error tool_result."""
    function = tools.get(block["name"])
    if function is None:
        return tool_result_block(
            block["id"], f"Unknown tool {block['name']!r}. Available tools: {sorted(tools)}", is_error=True)
    try:
        return tool_result_block(block["id"], function(**block["input"]))
    except Exception as error:  # the model sees the failure and may recover
        return tool_result_block(block["id"], f"{type(error).__name__}: {error}", is_error=True)


def dispatch_safely(tool_use_blocks, tools):
    """Run every tool_use block in parallel; an unknown or failing tool becomes an is_error result."""
    if not tool_use_blocks:
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(tool_use_blocks)) as pool:
        return list(pool.map(lambda block: call_safely(tools, block), tool_use_blocks))
