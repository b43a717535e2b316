import { mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

export default mergeConfig(sharedConfig, {
  test: {
    // The AWS SDK's documented switch for its Node 20 support notice (aws/aws-sdk-js-v3#7983),
    // set for this package's tests only; the library never sets it.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
