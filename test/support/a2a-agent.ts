import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Role, TaskState, type AgentCard, type Message, type Part, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  V1PushNotificationSerializer,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { useForFile } from './use-for-file';

/** What a skill of the test agent does with a message: answer at once, or go on with a task. */
export type SkillBehaviour =
  /** The task completed in the first answer, its artifact the message's data part echoed. */
  | 'echo'
  /** TASK_STATE_WORKING first; completed when the test calls `finish(taskId)`. */
  | 'works-then-completes'
  /** TASK_STATE_WORKING until cancelled. */
  | 'works-until-cancelled'
  /** TASK_STATE_FAILED with a text status message. */
  | 'fails'
  /**
   * TASK_STATE_INPUT_REQUIRED, asking "Which colour?" with a data part `{inputSchema}`; the next
   * message in the task completes it, its artifact `{answered}` the message's data (else text).
   */
  | 'asks-for-input'
  /** TASK_STATE_AUTH_REQUIRED with a text status message; the next message completes it as above. */
  | 'asks-for-auth'
  /**
   * TASK_STATE_INPUT_REQUIRED, then without an answer TASK_STATE_WORKING when the test calls
   * `finish(taskId)`, and completed (no artifact) at the second `finish`.
   */
  | 'asks-then-works-on';

/** The inputSchema the `asks-for-input` skill sends with its request. */
export const COLOUR_SCHEMA = {
  type: 'object',
  properties: { colour: { type: 'string' } },
  required: ['colour'],
};

/** A data part, as the SDK's types have it. */
export const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

const agentMessage = (text: string, taskId: string, contextId: string, more: Part[] = []): Message => ({
  messageId: `${taskId}-status`,
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [textPart(text), ...more],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/**
 * An A2A 1.0 agent built with `@a2a-js/sdk`'s own server (DefaultRequestHandler, its JSON-RPC and
 * Agent Card handlers on express) on 127.0.0.1: one skill per behaviour, the messages it got and the
 * tasks it was asked to cancel kept for the test to read.
 */
export class A2aTestAgent {
  readonly received: Message[] = [];
  readonly cancelled: string[] = [];
  /** The A2A-Version header of each JSON-RPC request. */
  readonly versions: Array<string | undefined> = [];
  private readonly finishers = new Map<string, () => void>();
  /** The agent's task for each message: the service's messageId is its own taskId. */
  private readonly taskOfMessage = new Map<string, string>();
  /** The context of each of the agent's tasks. */
  readonly contextOfTask = new Map<string, string>();
  /** In order: `GetTask` for each poll, `push` for each push notification the agent sends, as it starts sending it. */
  readonly pollsAndPushes: Array<'GetTask' | 'push'> = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  /** The agent's JSON-RPC endpoint, which its card names. */
  get endpoint(): string {
    return `${this.url}/a2a/jsonrpc`;
  }

  get cardUrl(): string {
    return `${this.url}/.well-known/agent-card.json`;
  }

  /** A card of A2A 0.3, which names its endpoint in `url` and no 1.0 interface. */
  get legacyCardUrl(): string {
    return `${this.url}/v0.3/.well-known/agent-card.json`;
  }

  /** A card whose JSONRPC 1.0 interface has credentials in its URL. */
  get credentialsCardUrl(): string {
    return `${this.url}/credentials/.well-known/agent-card.json`;
  }

  /** With `pushNotifications`, the card offers them and the SDK's sender pushes every task update to the config a message named. */
  static async start(
    skills: Record<string, SkillBehaviour>,
    { pushNotifications = false }: { pushNotifications?: boolean } = {},
  ): Promise<A2aTestAgent> {
    const app = express();
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = new A2aTestAgent(server, url);
    const card: AgentCard = {
      name: 'SDK test agent',
      description: 'An A2A agent of @a2a-js/sdk',
      version: '1.0.0',
      supportedInterfaces: [{ url: agent.endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
      provider: undefined,
      documentationUrl: undefined,
      capabilities: { streaming: false, pushNotifications, extensions: [], extendedAgentCard: false },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['application/json'],
      defaultOutputModes: ['application/json'],
      skills: Object.keys(skills).map((id) => ({
        id,
        name: `The ${id} skill`,
        description: `Does ${skills[id]}`,
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      })),
      signatures: [],
      iconUrl: undefined,
    };
    // The sender serializes a notification only to send it to a config a message named.
    const serializer = new V1PushNotificationSerializer();
    const pushConfigs = new InMemoryPushNotificationStore();
    const sender = new DefaultPushNotificationSender(pushConfigs, {
      serializers: {
        '1.0': {
          serialize: (...update) => {
            agent.pollsAndPushes.push('push');
            return serializer.serialize(...update);
          },
        },
      },
    });
    const handler = new DefaultRequestHandler(
      card,
      new InMemoryTaskStore(),
      agent.executor(skills),
      undefined,
      pushConfigs,
      sender,
    );
    const getTask = handler.getTask.bind(handler);
    handler.getTask = (...request) => {
      agent.pollsAndPushes.push('GetTask');
      return getTask(...request);
    };
    app.use((request, _response, next) => {
      if (request.method === 'POST') agent.versions.push(request.get('a2a-version'));
      next();
    });
    app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
    app.get('/credentials/.well-known/agent-card.json', (_request, response) => {
      const url = agent.endpoint.replace('http://', 'http://user:secret@');
      response.json({ ...card, supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] });
    });
    app.get('/v0.3/.well-known/agent-card.json', (_request, response) => {
      response.json({ name: card.name, url: agent.endpoint, protocolVersion: '0.3.0', preferredTransport: 'JSONRPC' });
    });
    app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
    return agent;
  }

  /** Ends a `works-then-completes` task: its artifact is `{finished: true}`. */
  finish(taskId: string): void {
    this.finishers.get(taskId)?.();
  }

  /** The agent's task started by the message `messageId` (the service's taskId), once it started. */
  taskFor(messageId: string): string | undefined {
    return this.taskOfMessage.get(messageId);
  }

  /** The ids of the tasks still working at the agent. */
  get working(): string[] {
    return [...this.finishers.keys()];
  }

  async close(): Promise<void> {
    for (const finish of this.finishers.values()) finish();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Resolves at the test's `finish(taskId)`. */
  private async finished(taskId: string): Promise<void> {
    await new Promise<void>((resolve) => this.finishers.set(taskId, resolve));
    this.finishers.delete(taskId);
  }

  private executor(skills: Record<string, SkillBehaviour>): AgentExecutor {
    return {
      execute: async (context: RequestContext, bus: ExecutionEventBus) => {
        const message = context.userMessage;
        this.received.push(message);
        const skill = (message.metadata?.skill as string | undefined) ?? Object.keys(skills)[0];
        const { taskId, contextId } = context;
        this.taskOfMessage.set(message.messageId, taskId);
        this.contextOfTask.set(taskId, contextId);
        const task = (state: TaskState, extra: Partial<Task> = {}): Task => ({
          id: taskId,
          contextId,
          status: { state, message: undefined, timestamp: new Date().toISOString() },
          artifacts: [],
          history: [message],
          metadata: undefined,
          ...extra,
        });
        const artifact = (value: unknown) => ({
          artifactId: 'answer',
          name: 'answer',
          description: '',
          parts: [dataPart(value)],
          metadata: undefined,
          extensions: [],
        });
        const data = message.parts.find((part) => part.content?.$case === 'data')?.content?.value;
        const text = message.parts.find((part) => part.content?.$case === 'text')?.content?.value;
        // A message in a task that waits for input answers it.
        if (context.task) {
          bus.publish(
            AgentEvent.task(
              task(TaskState.TASK_STATE_COMPLETED, { artifacts: [artifact({ answered: data ?? text })] }),
            ),
          );
          bus.finished();
          return;
        }
        const interrupted = (state: TaskState, said: string, more: Part[] = []) =>
          bus.publish(
            AgentEvent.task({
              ...task(state),
              status: {
                state,
                message: agentMessage(said, taskId, contextId, more),
                timestamp: new Date().toISOString(),
              },
            }),
          );
        switch (skills[skill]) {
          case 'asks-for-input':
            interrupted(TaskState.TASK_STATE_INPUT_REQUIRED, 'Which colour?', [
              dataPart({ inputSchema: COLOUR_SCHEMA }),
            ]);
            break;
          case 'asks-then-works-on': {
            interrupted(TaskState.TASK_STATE_INPUT_REQUIRED, 'Which colour?');
            const goOn = (state: TaskState) =>
              bus.publish(
                AgentEvent.statusUpdate({
                  taskId,
                  contextId,
                  status: { state, message: undefined, timestamp: undefined },
                  metadata: undefined,
                }),
              );
            await this.finished(taskId);
            goOn(TaskState.TASK_STATE_WORKING);
            await this.finished(taskId);
            goOn(TaskState.TASK_STATE_COMPLETED);
            break;
          }
          case 'asks-for-auth':
            interrupted(
              TaskState.TASK_STATE_AUTH_REQUIRED,
              'Sign in at https://auth.example/login, then send the code',
            );
            break;
          case 'echo': {
            bus.publish(
              AgentEvent.task(
                task(TaskState.TASK_STATE_COMPLETED, {
                  artifacts: [artifact({ echoed: (data as { params?: unknown } | undefined)?.params ?? text })],
                }),
              ),
            );
            break;
          }
          case 'fails':
            bus.publish(
              AgentEvent.task({
                ...task(TaskState.TASK_STATE_FAILED),
                status: {
                  state: TaskState.TASK_STATE_FAILED,
                  message: agentMessage('the disk is full', taskId, contextId),
                  timestamp: new Date().toISOString(),
                },
              }),
            );
            break;
          default: {
            bus.publish(AgentEvent.task(task(TaskState.TASK_STATE_WORKING)));
            await this.finished(taskId);
            if (this.cancelled.includes(taskId)) break;
            bus.publish(
              AgentEvent.artifactUpdate({
                taskId,
                contextId,
                artifact: artifact({ finished: true }),
                append: false,
                lastChunk: true,
                metadata: undefined,
              }),
            );
            bus.publish(
              AgentEvent.statusUpdate({
                taskId,
                contextId,
                status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
                metadata: undefined,
              }),
            );
          }
        }
        bus.finished();
      },
      cancelTask: async (taskId: string, bus: ExecutionEventBus) => {
        this.cancelled.push(taskId);
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId: taskId,
            status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: undefined },
            metadata: undefined,
          }),
        );
        this.finishers.get(taskId)?.();
        await Promise.resolve();
      },
    };
  }
}

/** An A2A test agent for the file's tests: started before them, closed after. */
export function useA2aAgent(
  skills: Record<string, SkillBehaviour>,
  options: { pushNotifications?: boolean } = {},
): () => A2aTestAgent {
  return useForFile(
    'the A2A agent',
    () => A2aTestAgent.start(skills, options),
    (agent) => agent.close(),
  );
}
