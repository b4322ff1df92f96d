export async function quick(): Promise<string> { return 'ok'; }
