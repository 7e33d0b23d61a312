import { GranuleConsolePage } from './GranuleConsolePage';
import { GranulesPage } from './GranulesPage';

/** The console's granule routes, as the router's lazy loaders take them. */
export const list = { Component: GranulesPage };
export const page = { Component: GranuleConsolePage };
