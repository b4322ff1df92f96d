import { el, jsonText } from './dom';
import type { Task } from './records';
import { appLink, statusBadge } from './task-parts';

const NODE_WIDTH = 230;
const NODE_HEIGHT = 150;
const GAP_X = 70;
const GAP_Y = 24;
const SVG = 'http://www.w3.org/2000/svg';

/**
 * A composition as its graph: a column per depth (a task sits right of its deepest parent), each
 * task a box with its status, attempts, progress and result, and an arrow from each parent; a
 * map's items hang off their map.
 */
export function compositionGraph(tasks: Task[]): HTMLElement {
  const parentsOf = (task: Task): string[] => [...(task.dependsOn ?? []), ...(task.mapTaskId ? [task.mapTaskId] : [])];
  const byId = new Map(tasks.map((task) => [task.taskId, task]));
  const depths = new Map<string, number>();
  const depthOf = (task: Task): number => {
    const known = depths.get(task.taskId);
    if (known !== undefined) return known;
    depths.set(task.taskId, 0);
    const parents = parentsOf(task).flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
    const depth = parents.length === 0 ? 0 : 1 + Math.max(...parents.map(depthOf));
    depths.set(task.taskId, depth);
    return depth;
  };
  const rows = new Map<number, number>();
  const places = new Map<string, { x: number; y: number }>();
  for (const task of tasks) {
    const depth = depthOf(task);
    const row = rows.get(depth) ?? 0;
    rows.set(depth, row + 1);
    places.set(task.taskId, { x: depth * (NODE_WIDTH + GAP_X), y: row * (NODE_HEIGHT + GAP_Y) });
  }
  const width = (Math.max(0, ...depths.values()) + 1) * (NODE_WIDTH + GAP_X);
  const height = Math.max(1, ...rows.values()) * (NODE_HEIGHT + GAP_Y);

  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  svg.setAttribute('class', 'edges');
  for (const task of tasks) {
    const to = places.get(task.taskId)!;
    for (const parent of parentsOf(task)) {
      const from = places.get(parent);
      if (!from) continue;
      const line = document.createElementNS(SVG, 'path');
      const [x1, y1, x2, y2] = [from.x + NODE_WIDTH, from.y + NODE_HEIGHT / 2, to.x, to.y + NODE_HEIGHT / 2];
      line.setAttribute('d', `M${x1},${y1} C${x1 + GAP_X / 2},${y1} ${x2 - GAP_X / 2},${y2} ${x2},${y2}`);
      svg.append(line);
    }
  }
  const graph = el('div', { class: 'graph' });
  graph.style.width = `${width}px`;
  graph.style.height = `${height}px`;
  graph.append(svg);
  for (const task of tasks) {
    const { x, y } = places.get(task.taskId)!;
    const node = taskNode(task);
    node.style.left = `${x}px`;
    node.style.top = `${y}px`;
    node.style.width = `${NODE_WIDTH}px`;
    node.style.height = `${NODE_HEIGHT}px`;
    graph.append(node);
  }
  return graph;
}

function taskNode(task: Task): HTMLElement {
  return el(
    'div',
    { class: `node node-${task.status}`, 'data-task-id': task.taskId },
    el('div', {}, appLink(`tasks/${task.taskId}`, task.operation), ' ', statusBadge(task.status)),
    el('div', { class: 'meta' }, `attempts ${task.attempts ?? 0}${task.phase ? ` · ${task.phase}` : ''}`),
    task.progress === undefined ? null : el('progress', { max: 1, value: task.progress }),
    task.message ? el('div', { class: 'meta' }, task.message) : null,
    task.result === undefined ? null : el('pre', { class: 'result' }, jsonText(task.result)),
    task.error === undefined ? null : el('pre', { class: 'error' }, jsonText(task.error)),
  );
}
