/**
 * The ferry release, from package.json: what `ferry --version`, `ferryctl --version`,
 * the `ferry_build_info` metric and GetPipelineState report, so all four agree.
 */
import packageJson from '../package.json' with { type: 'json' };

export const FERRY_VERSION: string = packageJson.version;
