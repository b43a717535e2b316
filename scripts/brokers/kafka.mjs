// Placeholder until the broker script for kafka is written.
export const kafka = {
  process: 'kafka',
  address: '',
  ready: async () => false,
  up: async () => {
    throw new Error('kafka: not yet scripted');
  },
};
