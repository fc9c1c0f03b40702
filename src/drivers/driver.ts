/**
 * The driver contract, as the drivers import it (`../driver.ts`). It lives in `src/contract/driver.ts`, below
 * the core folders that call a driver (selection, patch, config, the pipeline), so that no core folder imports
 * `src/drivers/`.
 */
export * from '../contract/driver.ts';
