// Placeholder until the broker script for elasticmq is written.
export const elasticmq = {
  process: 'elasticmq',
  address: '',
  ready: async () => false,
  up: async () => {
    throw new Error('elasticmq: not yet scripted');
  },
};
