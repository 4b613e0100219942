"""Agent definitions: an LLM agent, its tools and its callbacks.

An :class:`Agent` is configuration that lives on the worker. Workflows refer to it by name
only; the activities look it up to build the model request and run its tools and callbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Annotated, Any, Literal, TypeAlias

from google.genai import types
from pydantic import BaseModel, WithJsonSchema

from .context import CallbackContext, ReadonlyContext, ToolContext
from .errors import UnknownAgentError
from .flow.remote import RemoteReply, RemoteTurn
from .instructions import Instruction, instruction_text, join_instructions
from .models import LlmRequest, LlmResponse
from .tools import BaseToolset, FunctionTool, as_tool

__all__ = [
    "AfterAgentCallback",
    "AfterModelCallback",
    "AfterToolCallback",
    "Agent",
    "AgentRegistry",
    "BaseAgent",
    "BeforeAgentCallback",
    "BeforeModelCallback",
    "BeforeToolCallback",
    "Instruction",
    "LlmAgent",
    "LoopAgent",
    "ParallelAgent",
    "RemoteAgent",
    "SequentialAgent",
]

_Maybe: TypeAlias = Any  # a value or an awaitable of it; callbacks may be sync or async

BeforeAgentCallback: TypeAlias = Callable[[CallbackContext], _Maybe]
"""Runs before the agent's first step; returning ``types.Content`` ends the invocation with it."""

AfterAgentCallback: TypeAlias = Callable[[CallbackContext], _Maybe]
"""Runs after the agent's final answer; returning ``types.Content`` adds it as a last event."""

BeforeModelCallback: TypeAlias = Callable[[CallbackContext, LlmRequest], _Maybe]
"""Runs before each model call; returning an ``LlmResponse`` skips the model."""

AfterModelCallback: TypeAlias = Callable[[CallbackContext, LlmResponse], _Maybe]
"""Runs after each model call; returning an ``LlmResponse`` replaces the model's."""

BeforeToolCallback: TypeAlias = Callable[[ToolContext, FunctionTool, dict[str, Any]], _Maybe]
"""Runs before a tool; returning a dict skips the tool and uses the dict as its response."""

AfterToolCallback: TypeAlias = Callable[
    [ToolContext, FunctionTool, dict[str, Any], dict[str, Any]], _Maybe
]
"""Runs after a tool; returning a dict replaces the tool's response."""


class BaseAgent:
    """What every agent kind shares: a name, a description and sub-agents.

    Args:
        name: Unique within the agent tree; also the author of the agent's events.
        description: One line other agents (and the UI) see.
        sub_agents: Agents this one delegates to.

    Raises:
        ValueError: The name is not a Python identifier, is ``user``, or a sub-agent
            appears twice.
    """

    def __init__(
        self, name: str, *, description: str = "", sub_agents: Iterable[BaseAgent] = ()
    ) -> None:
        if not name or not name.isidentifier():
            raise ValueError(f"agent name must be a Python identifier, got {name!r}")
        if name == "user":
            raise ValueError("agent name 'user' is reserved for the user's events")
        self.name = name
        self.description = description
        self.sub_agents: list[BaseAgent] = list(sub_agents)
        names = [a.name for a in self.sub_agents]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"agent {name!r} has duplicate sub-agents: {', '.join(duplicates)}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class Agent(BaseAgent):
    """An LLM agent: a model name, an instruction, tools, callbacks and sub-agents.

    Args:
        name: Unique name; also the author of the agent's events.
        model: Model name resolved through the worker's ``ModelRegistry`` (e.g.
            ``gemini-2.5-flash`` or ``scripted:weather``). Only the name crosses into
            workflow history; the model object lives on the worker. Empty: the model of
            the nearest LLM agent above this one (ADK's ``canonical_model``), resolved by
            the :class:`AgentRegistry` that serves the tree.
        instruction: System instruction: a template (``{key}`` and ``{key?}`` read session
            state, ``{artifact.name}`` a text artifact; see :mod:`adk_temporal.instructions`),
            or a function (sync or async) of the read-only context whose text is used as it
            is. It runs on the worker where the model request is built.
        description: One line other agents (and the UI) see.
        tools: Plain Python functions (sync or async), ``FunctionTool``, ``AgentTool``, or
            toolsets (``BaseToolset``, e.g. ``McpToolset``) whose tools are listed on the
            worker at each step; a listed tool named like a function tool is left out.
        sub_agents: Agents the model may hand the conversation to with the built-in
            ``transfer_to_agent`` tool.
        before_agent_callback: See :data:`BeforeAgentCallback`.
        after_agent_callback: See :data:`AfterAgentCallback`.
        before_model_callback: See :data:`BeforeModelCallback`.
        after_model_callback: See :data:`AfterModelCallback`.
        before_tool_callback: See :data:`BeforeToolCallback`.
        after_tool_callback: See :data:`AfterToolCallback`.
        generate_content_config: Generation settings passed to the model as they are.
        output_key: The state key the agent's final text is written to (with the final
            model event's state delta), as ADK does.
        output_schema: A pydantic model the final answer must be JSON of: the model is asked
            for JSON of its schema, the answer is validated, and the parsed value (a dict)
            is what ``output_key`` stores. An answer that does not validate ends the
            invocation with an ``OutputSchemaError``.
        include_contents: ``"default"`` sends the session's history; ``"none"`` only the
            current turn (from the latest message by the user or another agent). Unset:
            ``"default"``, except as a graph node, where it is ``"none"`` (ADK 2's rule).
        global_instruction: An instruction (template or provider) for every agent of the
            tree, put before each one's own; only the root agent's takes effect.
        disallow_transfer_to_parent: The model is not offered a transfer back to the parent
            agent, and a conversation does not stay with this agent for the next message.
        disallow_transfer_to_peers: The model is not offered a transfer to the parent's
            other sub-agents.

    Raises:
        ValueError: Tool names repeat or take the reserved transfer name, or
            ``include_contents`` is neither ``"default"`` nor ``"none"``.
        TypeError: ``output_schema`` is not a pydantic model class.
    """

    def __init__(
        self,
        name: str,
        model: str = "",
        instruction: Instruction = "",
        *,
        description: str = "",
        tools: Iterable[Callable[..., Any] | FunctionTool | BaseToolset] = (),
        sub_agents: Iterable[BaseAgent] = (),
        before_agent_callback: BeforeAgentCallback | None = None,
        after_agent_callback: AfterAgentCallback | None = None,
        before_model_callback: BeforeModelCallback | None = None,
        after_model_callback: AfterModelCallback | None = None,
        before_tool_callback: BeforeToolCallback | None = None,
        after_tool_callback: AfterToolCallback | None = None,
        generate_content_config: types.GenerateContentConfig | None = None,
        output_key: str | None = None,
        output_schema: type[BaseModel] | None = None,
        include_contents: Literal["default", "none"] | None = None,
        global_instruction: Instruction = "",
        disallow_transfer_to_parent: bool = False,
        disallow_transfer_to_peers: bool = False,
    ) -> None:
        super().__init__(name, description=description, sub_agents=sub_agents)
        _check_options(name, include_contents or "default", output_schema)
        self.model = model
        self.instruction = instruction
        self.global_instruction = global_instruction
        given = list(tools)
        self.toolsets: list[BaseToolset] = [t for t in given if isinstance(t, BaseToolset)]
        self.tools: list[FunctionTool] = [
            as_tool(t) for t in given if not isinstance(t, BaseToolset)
        ]
        names = [t.name for t in self.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"agent {name!r} has duplicate tool names: {', '.join(duplicates)}")
        if TRANSFER_TOOL_NAME in names:
            raise ValueError(f"tool name {TRANSFER_TOOL_NAME!r} is reserved for agent transfer")
        self.before_agent_callback = before_agent_callback
        self.after_agent_callback = after_agent_callback
        self.before_model_callback = before_model_callback
        self.after_model_callback = after_model_callback
        self.before_tool_callback = before_tool_callback
        self.after_tool_callback = after_tool_callback
        self.generate_content_config = generate_content_config
        self.output_key = output_key
        self.output_schema = output_schema
        self.include_contents: Literal["default", "none"] = include_contents or "default"
        self.include_contents_set = include_contents is not None
        """Whether the author chose ``include_contents`` (as a graph node, an agent that
        did not sees only its current turn, ADK's default there)."""
        self.request_config = _request_config(generate_content_config, output_schema)
        self.disallow_transfer_to_parent = disallow_transfer_to_parent
        self.disallow_transfer_to_peers = disallow_transfer_to_peers

    def tool(self, name: str) -> FunctionTool | None:
        """The tool called ``name``, or ``None`` (the transfer tool is the registry's)."""
        return next((t for t in self.tools if t.name == name), None)

    async def system_instruction(self, ctx: ReadonlyContext, *, root: Agent | None = None) -> str:
        """The system instruction for ``ctx``: ``root``'s global instruction, then this agent's.

        Args:
            ctx: The context of the model request being built.
            root: The LLM agent at the top of this agent's tree; ``None`` when there is none
                (the top is a workflow agent), and then this agent's own global instruction
                applies, as in ADK-Go.

        Raises:
            InstructionKeyError: A template names a missing state key or artifact.
        """
        root = root or self
        where = f"the global instruction of agent {root.name!r}"
        first = await instruction_text(root.global_instruction, ctx, where=where)
        own = await instruction_text(self.instruction, ctx)
        return join_instructions(first, own)

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={self.model!r}, tools={len(self.tools)}" + (
            f", toolsets={len(self.toolsets)})" if self.toolsets else ")"
        )


def _request_config(
    config: types.GenerateContentConfig | None, schema: type[BaseModel] | None
) -> types.GenerateContentConfig | None:
    """The generation settings a model request carries: ``config``, asking for JSON of
    ``schema`` when there is one (the agent's own config is left as given)."""
    if schema is None:
        return config
    base = config.model_copy() if config is not None else types.GenerateContentConfig()
    return base.model_copy(
        update={"response_mime_type": "application/json", "response_schema": schema}
    )


LlmAgent = Agent
"""ADK's name of the LLM agent (``google.adk.agents.LlmAgent``): the same class."""


class SequentialAgent(BaseAgent):
    """Runs its sub-agents one after another in the same invocation.

    A sub-agent that escalates (``ctx.actions.escalate = True``) or ends the invocation
    stops the sequence.
    """


class LoopAgent(BaseAgent):
    """Runs its sub-agents in order, again and again, in the same invocation.

    The loop ends when a sub-agent escalates (``ctx.actions.escalate = True``; the
    escalation stops at the loop, so an enclosing sequence goes on), when a tool ends the
    invocation, or after ``max_iterations`` passes. A long loop hands over to a fresh
    workflow run (continue-as-new) between steps, carrying its iteration.

    Args:
        name: Unique name.
        sub_agents: The agents of one pass, in order.
        max_iterations: Passes at most; ``None`` loops until an escalation (or the
            invocation's step limit).
        description: One line other agents (and the UI) see.

    Raises:
        ValueError: ``max_iterations`` is less than 1.
    """

    def __init__(
        self,
        name: str,
        sub_agents: Iterable[BaseAgent] = (),
        max_iterations: int | None = None,
        *,
        description: str = "",
    ) -> None:
        super().__init__(name, description=description, sub_agents=sub_agents)
        if max_iterations is not None and max_iterations < 1:
            raise ValueError(
                f"loop agent {name!r}: max_iterations must be at least 1 or None, "
                f"got {max_iterations}"
            )
        self.max_iterations = max_iterations


class ParallelAgent(BaseAgent):
    """Runs its sub-agents concurrently, each on its own branch ``<parent>.<sub>``.

    Each branch sees only its own history. When all are done, their state deltas are
    applied once more in sub-agent order (so the final state does not depend on which
    branch finished first) and artifact deltas keep the highest version.
    """


class RemoteAgent(BaseAgent):
    """An agent that runs elsewhere: each turn is sent to it by a remote step, and what its
    task asks becomes a request of this invocation (``adk_temporal.a2a.RemoteA2aAgent`` is
    one). Usable as a sub-agent or through an :class:`AgentTool`.
    """

    async def exchange(self, turn: RemoteTurn) -> RemoteReply:
        """Send ``turn`` and follow the remote task until it ends, asks, or has worked for
        ``turn.follow_seconds``.

        Raises:
            AdkRunError: The remote side could not be reached (the step is retried).
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement exchange()")


class AgentTool(FunctionTool):
    """An agent offered to a model as a tool.

    The call runs the agent inside the same invocation with isolation scope = the
    function-call id: it starts from the call's ``request`` argument, sees none of the
    caller's history, and the caller sees none of its events. Its final text is the
    function response (``{"result": text}``); its state and artifact deltas are passed up.

    Args:
        agent: The agent to run.
        name: The tool name; the agent's name by default.
        description: The tool description; the agent's description by default.
    """

    def __init__(
        self, agent: BaseAgent, *, name: str | None = None, description: str | None = None
    ) -> None:
        def request(request: str) -> dict[str, Any]:
            """Ask the agent.

            Args:
                request: What the agent should do, in plain words.
            """
            raise RuntimeError("an AgentTool runs in the workflow, never as a function")

        super().__init__(
            request,
            name=name or agent.name,
            description=description or agent.description or f"Ask the {agent.name} agent.",
        )
        self.agent = agent


def _check_options(name: str, include_contents: str, output_schema: type[BaseModel] | None) -> None:
    """Refuse an ``include_contents`` or ``output_schema`` an agent cannot have."""
    if include_contents not in ("default", "none"):
        raise ValueError(
            f"agent {name!r}: include_contents must be 'default' or 'none', "
            f"got {include_contents!r}"
        )
    if output_schema is not None and not (
        isinstance(output_schema, type) and issubclass(output_schema, BaseModel)
    ):
        raise TypeError(
            f"agent {name!r}: output_schema must be a pydantic model class, got {output_schema!r}"
        )


TRANSFER_TOOL_NAME = "transfer_to_agent"
"""The built-in tool an agent with sub-agents, a parent or peers uses to hand over."""


def _transfer_tool(targets: Sequence[BaseAgent]) -> FunctionTool:
    """ADK's ``transfer_to_agent``: ``agent_name`` an enum of ``targets``, answering ``{}``."""

    def transfer_to_agent(agent_name: str, ctx: ToolContext) -> dict[str, Any]:
        """Hand the question to another agent.

        Hands control to another agent when it is better suited to answer the user's
        question, according to that agent's description.

        Args:
            agent_name: The agent to transfer to.
        """
        ctx.actions.transfer_to_agent = agent_name
        return {}

    # The model may only name a target: anything else is refused as an invalid argument,
    # which the model sees at once.
    names = tuple(a.name for a in targets)
    # An enum even for one target (pydantic would write ``const``), as ADK declares it.
    schema = WithJsonSchema({"type": "string", "enum": list(names)})
    transfer_to_agent.__annotations__ = {
        **transfer_to_agent.__annotations__,
        "agent_name": Annotated[Literal[names], schema],
    }
    return FunctionTool(transfer_to_agent)


def _transfer_instruction(parent: BaseAgent | None, targets: Sequence[BaseAgent]) -> str:
    """What an agent is told about the agents it may transfer to (ADK's transfer prompt)."""
    listed = "\n".join(
        f"Agent name: {a.name}\nAgent description: {a.description}\n" for a in targets
    )
    names = ", ".join(f"`{n}`" for n in sorted(a.name for a in targets))
    text = (
        f"You can transfer the question to one of these agents:\n\n{listed}\n"
        "If you are the best one to answer according to your description, answer it.\n\n"
        "If another agent is better suited according to its description, call the "
        f"`{TRANSFER_TOOL_NAME}` function to transfer the question to it, and write nothing "
        "besides the function call.\n\n"
        f"The only agents `{TRANSFER_TOOL_NAME}` accepts are {names}.\n"
    )
    if parent is not None:
        text += (
            "\nIf neither you nor the other agents suit the question, transfer to your "
            f"parent agent {parent.name}.\n"
        )
    return text


class AgentRegistry(Mapping[str, BaseAgent]):
    """Every agent a worker serves, by name: the given agents and everything below them.

    Sub-agents and the agents inside ``AgentTool`` are registered too, with their parent,
    so a transfer or an agent call can be resolved by name.

    An LLM agent without a model uses the model of the nearest LLM agent above it that
    has one (ADK's ``canonical_model``): :meth:`model_of`.

    Raises:
        ValueError: Two different agents share a name, an agent has two parents, or an LLM
            agent has no model and no LLM agent above it has one.
    """

    def __init__(self, agents: Sequence[BaseAgent]) -> None:
        self._agents: dict[str, BaseAgent] = {}
        self._parents: dict[str, str] = {}
        for agent in agents:
            self._add(agent, None)
        self._transfer: dict[str, FunctionTool | None] = {}
        self._models = {
            name: self._inherited_model(agent)
            for name, agent in self._agents.items()
            if isinstance(agent, Agent)
        }

    def _inherited_model(self, agent: Agent) -> str:
        """``agent``'s model, else the nearest model above it (ADK-Python
        ``LlmAgent.canonical_model`` walks ``parent_agent`` the same way)."""
        current: BaseAgent | None = agent
        while current is not None:
            if isinstance(current, Agent) and current.model:
                return current.model
            current = self.parent(current.name)
        raise ValueError(
            f"agent {agent.name!r} has no model and no LLM agent above it has one; "
            "give it (or its root agent) model=..."
        )

    def model_of(self, name: str) -> str:
        """The model LLM agent ``name`` calls: its own, else its nearest ancestor's.

        Raises:
            UnknownAgentError: No LLM agent has that name.
        """
        self.llm_agent(name)
        return self._models[name]

    def _add(self, agent: BaseAgent, parent: BaseAgent | None) -> None:
        known = self._agents.get(agent.name)
        if known is not None and known is not agent:
            raise ValueError(f"two agents are named {agent.name!r}")
        if parent is not None:
            previous = self._parents.setdefault(agent.name, parent.name)
            if previous != parent.name:
                raise ValueError(
                    f"agent {agent.name!r} is a sub-agent of both {previous!r} and {parent.name!r}"
                )
        if known is not None:
            return
        self._agents[agent.name] = agent
        for sub in agent.sub_agents:
            self._add(sub, agent)
        if isinstance(agent, Agent):
            for tool in agent.tools:
                if isinstance(tool, AgentTool):
                    self._add(tool.agent, None)

    def __getitem__(self, name: str) -> BaseAgent:
        try:
            return self._agents[name]
        except KeyError:
            known = ", ".join(sorted(self._agents)) or "none"
            raise UnknownAgentError(
                f"unknown agent {name!r}; this worker serves: {known}"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._agents)

    def __len__(self) -> int:
        return len(self._agents)

    def llm_agent(self, name: str) -> Agent:
        """The LLM agent called ``name``.

        Raises:
            UnknownAgentError: No agent has that name, or it is not an LLM agent.
        """
        agent = self[name]
        if not isinstance(agent, Agent):
            raise UnknownAgentError(f"agent {name!r} is a {type(agent).__name__}, not an LLM agent")
        return agent

    def parent(self, name: str) -> BaseAgent | None:
        """The agent ``name`` is a sub-agent of, if any."""
        parent = self._parents.get(name)
        return self._agents[parent] if parent else None

    def root_of(self, name: str) -> str:
        """The root of the tree agent ``name`` belongs to (the agent itself at the top)."""
        while (parent := self._parents.get(name)) is not None:
            name = parent
        return name

    def transfer_targets(self, name: str) -> list[BaseAgent]:
        """Where LLM agent ``name`` may transfer, as ADK offers it: its sub-agents; when its
        parent is an LLM agent, also the parent (unless ``disallow_transfer_to_parent``) and
        the parent's other sub-agents (unless ``disallow_transfer_to_peers``). Under a
        sequential, parallel or loop agent only the sub-agents are offered."""
        agent = self.llm_agent(name)
        targets = list(agent.sub_agents)
        parent = self.parent(name)
        if not isinstance(parent, Agent):
            return targets
        if not agent.disallow_transfer_to_parent:
            targets.append(parent)
        if not agent.disallow_transfer_to_peers:
            targets += [a for a in parent.sub_agents if a.name != name]
        return targets

    def transfer_instruction(self, name: str) -> str:
        """What LLM agent ``name``'s system instruction says about transfers ("" for none)."""
        targets = self.transfer_targets(name)
        if not targets:
            return ""
        agent = self.llm_agent(name)
        parent = None if agent.disallow_transfer_to_parent else self.parent(name)
        return _transfer_instruction(parent if isinstance(parent, Agent) else None, targets)

    def may_continue(self, name: str) -> bool:
        """Whether a conversation may stay with agent ``name`` for the next message: it and
        every agent above it are LLM agents none of which disallows transfer to its parent
        (ADK's "transferable across the agent tree")."""
        current: BaseAgent | None = self._agents.get(name)
        while current is not None:
            if not isinstance(current, Agent) or current.disallow_transfer_to_parent:
                return False
            current = self.parent(current.name)
        return True

    def tools(self, name: str) -> list[FunctionTool]:
        """The tools the model of LLM agent ``name`` may call, ``transfer_to_agent`` included."""
        agent = self.llm_agent(name)
        if name not in self._transfer:
            targets = self.transfer_targets(name)
            self._transfer[name] = _transfer_tool(targets) if targets else None
        transfer = self._transfer[name]
        return [*agent.tools, transfer] if transfer is not None else list(agent.tools)

    async def resolve_tools(self, name: str) -> list[FunctionTool]:
        """:meth:`tools` plus what the agent's toolsets list now (worker side only).

        A listed tool whose name a function tool (or the transfer tool) already has, or an
        earlier toolset listed, is left out: the agent's own tools win, so a server cannot
        shadow them.

        Raises:
            AdkError: A toolset cannot list its tools (e.g. ``McpServerError``).
        """
        tools = self.tools(name)
        agent = self.llm_agent(name)
        if not agent.toolsets:
            return tools
        taken = {t.name for t in tools}
        listed: list[FunctionTool] = []
        for toolset in agent.toolsets:
            for tool in await toolset.get_tools():
                if tool.name not in taken:
                    taken.add(tool.name)
                    listed.append(tool)
        return [*agent.tools, *listed, *tools[len(agent.tools) :]]
