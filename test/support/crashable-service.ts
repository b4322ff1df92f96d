import path from 'node:path';
import { freePort } from '../../src/util/ports';
import { serviceEnv } from './global-setup';
import { ServiceProcess } from './service-process';
import { testStack } from './test-stack';

/**
 * A worker and an API in processes of their own, on a task queue of their own (the shared service's
 * worker must take none of their tasks), on the test stack's Temporal and MongoDB: each can be
 * killed with SIGKILL and started again, appending to the same log.
 */
export interface CrashableService {
  baseUrl: string;
  worker: () => ServiceProcess;
  api: () => ServiceProcess;
  /** Starts the worker (again), resolved once it polls its task queue. */
  startWorker: () => Promise<void>;
  /** Starts the API (again) on the same port, resolved once it is ready. */
  startApi: () => Promise<void>;
}

/** A crashable service for the file's tests, `env` adding to the stack's: both started before them, stopped after. */
export function useCrashableService(name: string, env: Record<string, string> = {}): CrashableService {
  const taskQueue = `${name}-${process.pid}`;
  let worker: ServiceProcess | undefined;
  let api: ServiceProcess | undefined;
  let apiPort = 0;
  let processEnv: Record<string, string> = {};
  const logOf = (role: string) => path.join(testStack().runDir, `${taskQueue}-${role}.log`);
  const service: CrashableService = {
    baseUrl: '',
    worker: () => worker!,
    api: () => api!,
    async startWorker() {
      worker = ServiceProcess.spawn('worker.ts', processEnv, logOf('worker'));
      await worker.waitForLog('worker polling');
    },
    async startApi() {
      api = ServiceProcess.spawn('server.ts', { ...processEnv, PORT: String(apiPort) }, logOf('api'));
      await api.waitReady(service.baseUrl);
    },
  };
  beforeAll(async () => {
    apiPort = await freePort();
    service.baseUrl = `http://127.0.0.1:${apiPort}`;
    processEnv = serviceEnv({ ...testStack() }, { TEMPORAL_TASK_QUEUE: taskQueue, ...env });
    await Promise.all([service.startWorker(), service.startApi()]);
  });
  afterAll(async () => {
    await Promise.all([worker?.stop(), api?.stop()]);
  });
  return service;
}
