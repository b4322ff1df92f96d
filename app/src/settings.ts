/** What the service tells the page in its meta elements (src/web-app/app-files.ts). */
const meta = (name: string): string => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? '';

/** The run's page in the Temporal Web UI; undefined when the service knows no Web UI. */
export function temporalRunUrl(workflowId: string): string | undefined {
  const ui = meta('acs-temporal-ui');
  if (ui === '') return undefined;
  const namespace = meta('acs-temporal-namespace') || 'default';
  return `${ui}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
