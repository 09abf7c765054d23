declare module 'mediawiki-title' {
  export class Title {
    static newFromText(text: string, siteInfo: unknown, defaultNs?: number): Title;
    getPrefixedDBKey(): string;
    getPrefixedText(): string;
    getNamespace(): { getId(): number };
  }
  export class TitleError extends Error {}
}
