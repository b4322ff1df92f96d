import { agentPartOf, nameTools } from './tool-names';

const tool = (name: string) => ({ name });

describe('the names of the tools /mcp serves', () => {
  it("are {agent}.{tool}, the agent's name in the characters MCP allows", () => {
    expect(agentPartOf('Weather bot (EU)')).toBe('Weather_bot_EU');
    expect(agentPartOf('Ünïcode & more')).toBe('n_code_more');
    expect(agentPartOf('***')).toBe('agent');
    expect(agentPartOf('x'.repeat(300))).toHaveLength(48);
    expect(nameTools([{ id: 'a1', name: 'Weather bot', tools: [tool('forecast'), tool('alerts')] }])).toEqual([
      { name: 'Weather_bot.alerts', agentId: 'a1', tool: tool('alerts') },
      { name: 'Weather_bot.forecast', agentId: 'a1', tool: tool('forecast') },
    ]);
  });

  it('tell apart agents whose names read the same, whatever their order', () => {
    const agents = [
      { id: '11111111-aaaa', name: 'Echo', tools: [tool('echo')] },
      { id: '22222222-bbbb', name: 'echo!', tools: [tool('echo')] },
      { id: '22222222-cccc', name: 'Echo', tools: [tool('echo')] },
      { id: '22222222-eeee', name: 'Echo', tools: [tool('echo')] },
      { id: '33333333-dddd', name: 'Other', tools: [tool('echo')] },
    ];
    const names = nameTools(agents).map((named) => [named.name, named.agentId]);
    expect(names).toEqual([
      ['Echo-11111111.echo', '11111111-aaaa'],
      ['Echo-22222222-cccc.echo', '22222222-cccc'],
      ['Echo-22222222-eeee.echo', '22222222-eeee'],
      ['Other.echo', '33333333-dddd'],
      ['echo.echo', '22222222-bbbb'],
    ]);
    expect(nameTools([...agents].reverse()).map((named) => [named.name, named.agentId])).toEqual(names);
  });

  it('leave out a tool whose name would pass 128 characters', () => {
    expect(nameTools([{ id: 'a', name: 'A', tools: [tool('t'.repeat(127)), tool('t'.repeat(126))] }])).toEqual([
      { name: `A.${'t'.repeat(126)}`, agentId: 'a', tool: tool('t'.repeat(126)) },
    ]);
  });
});
