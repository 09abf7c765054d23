declare module 'mediawiki-title' {
  export class Title {
    static newFromText(text: string, siteInfo: unknown, defaultNs?: number): Title;
    getKey(): string;
    getPrefixedDBKey(): string;
    getPrefixedText(): string;
    getNamespace(): { getId(): number; getNormalizedText(): string };
  }
  export class TitleError extends Error {}
}
